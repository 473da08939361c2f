/* tooltap._core._speedups: the stream hot path's one byte-level step, in C.
 *
 * match_run(chunk, pos, head, tail, cap) -> (bytes, int)
 *
 * Walks the whole SSE events of ``chunk`` from offset ``pos`` (an event ends at the first
 * blank line, ``\n\n``) while each one is at most ``cap`` bytes and is ``head`` (exactly),
 * then the body of a JSON string valid on its own (no unescaped quote, no control
 * character, only valid escapes, valid UTF-8) up to its closing quote, then ``tail``,
 * which starts with that quote. Between the tail's bytes an event may hold spaces and
 * tabs (JSON whitespace, as providers pad their events), except inside the tail's strings
 * and after its first newline. Returns the bodies of those events joined, and the offset
 * after the last one (``pos`` when the first event does not match).
 * ``_json._match_run`` is the same function in Python, used when this module is not
 * built; tests check that the two agree.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static int
is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The length of the JSON string body at s[0:n] (up to its unescaped closing quote), or
 * -1 when it is not valid or not closed; *high set if it has a byte >= 0x80. */
static Py_ssize_t
string_body(const unsigned char *s, Py_ssize_t n, int *high)
{
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == '"') {
            return i;
        }
        if (c < 0x20) {
            return -1;
        }
        if (c == '\\') {
            if (i + 1 >= n) {
                return -1;
            }
            switch (s[i + 1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                i += 2;
                continue;
            case 'u':
                if (i + 5 >= n || !is_hex(s[i + 2]) || !is_hex(s[i + 3]) || !is_hex(s[i + 4])
                    || !is_hex(s[i + 5])) {
                    return -1;
                }
                i += 6;
                continue;
            default:
                return -1;
            }
        }
        if (c >= 0x80) {
            *high = 1;
        }
        i++;
    }
    return -1;
}

/* 1 when r[0:n] is tail[0:t] with spaces and tabs where the header comment allows. */
static int
tail_matches(const unsigned char *r, Py_ssize_t n, const unsigned char *tail, Py_ssize_t t)
{
    Py_ssize_t i = 0, j = 0;
    int in_string = 0, newline = 0;
    while (j < t) {
        if (j > 0 && !in_string && !newline && i < n && (r[i] == ' ' || r[i] == '\t')) {
            i++;
            continue;
        }
        if (i >= n || r[i] != tail[j]) {
            return 0;
        }
        if (tail[j] == '"' && j > 0) {
            in_string = !in_string;
        } else if (tail[j] == '\n') {
            newline = 1;
        }
        i++;
        j++;
    }
    return i == n;
}

/* The offset just after the first "\n\n" in c[pos:n], or -1. */
static Py_ssize_t
blank_line(const unsigned char *c, Py_ssize_t pos, Py_ssize_t n)
{
    while (pos < n - 1) {
        const unsigned char *nl = memchr(c + pos, '\n', (size_t)(n - 1 - pos));
        if (nl == NULL) {
            return -1;
        }
        pos = nl - c;
        if (c[pos + 1] == '\n') {
            return pos + 2;
        }
        pos++;
    }
    return -1;
}

/* The length of the body when ev[0:n] is head + string body + tail, else -1. */
static Py_ssize_t
match_event(const unsigned char *ev, Py_ssize_t n, const char *head, Py_ssize_t h,
            const unsigned char *tail, Py_ssize_t t)
{
    if (n < h || memcmp(ev, head, h) != 0) {
        return -1;
    }
    int high = 0;
    Py_ssize_t size = string_body(ev + h, n - h, &high);
    if (size < 0 || !tail_matches(ev + h + size, n - h - size, tail, t)) {
        return -1;
    }
    if (high) { /* the codec's own strict check: the same verdict as bytes.decode() */
        PyObject *text = PyUnicode_DecodeUTF8((const char *)ev + h, size, "strict");
        if (text == NULL) {
            PyErr_Clear();
            return -1;
        }
        Py_DECREF(text);
    }
    return size;
}

static PyObject *
match_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "match_run(chunk, pos, head, tail, cap) takes 5 arguments");
        return NULL;
    }
    PyObject *chunk = args[0], *head = args[2], *tail = args[3];
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]), cap = PyLong_AsSsize_t(args[4]);
    if ((pos == -1 || cap == -1) && PyErr_Occurred()) {
        return NULL;
    }
    if (!PyBytes_Check(head) || !PyBytes_Check(tail)) {
        PyErr_SetString(PyExc_TypeError, "match_run: head and tail must be bytes");
        return NULL;
    }
    if (PyBytes_GET_SIZE(tail) == 0 || PyBytes_AS_STRING(tail)[0] != '"') {
        PyErr_SetString(PyExc_ValueError, "match_run: tail must start with the closing quote");
        return NULL;
    }
    if (!PyBytes_CheckExact(chunk) || pos < 0) {
        return Py_BuildValue("(yn)", "", pos);
    }
    const unsigned char *c = (const unsigned char *)PyBytes_AS_STRING(chunk);
    Py_ssize_t n = PyBytes_GET_SIZE(chunk), h = PyBytes_GET_SIZE(head), t = PyBytes_GET_SIZE(tail);
    const char *hd = PyBytes_AS_STRING(head);
    const unsigned char *tl = (const unsigned char *)PyBytes_AS_STRING(tail);
    Py_ssize_t total = 0, count = 0, room = 0;
    Py_ssize_t *spans = NULL; /* (offset, length) of each body */
    while (pos < n) {
        Py_ssize_t stop = blank_line(c, pos, n);
        if (stop < 0) {
            break;
        }
        if (stop - pos > cap) {
            break;
        }
        Py_ssize_t size = match_event(c + pos, stop - pos, hd, h, tl, t);
        if (size < 0) {
            break;
        }
        if (count == room) {
            room = room ? 2 * room : 16;
            Py_ssize_t *grown = PyMem_Realloc(spans, (size_t)room * 2 * sizeof(Py_ssize_t));
            if (grown == NULL) {
                PyMem_Free(spans);
                return PyErr_NoMemory();
            }
            spans = grown;
        }
        spans[2 * count] = pos + h;
        spans[2 * count + 1] = size;
        count++;
        total += size;
        pos = stop;
    }
    PyObject *joined;
    if (count == 1) {
        joined = PyBytes_FromStringAndSize((const char *)c + spans[0], spans[1]);
    } else {
        joined = PyBytes_FromStringAndSize(NULL, total);
        if (joined != NULL) {
            char *out = PyBytes_AS_STRING(joined);
            for (Py_ssize_t i = 0; i < count; i++) {
                memcpy(out, c + spans[2 * i], (size_t)spans[2 * i + 1]);
                out += spans[2 * i + 1];
            }
        }
    }
    PyMem_Free(spans);
    if (joined == NULL) {
        return NULL;
    }
    return Py_BuildValue("(Nn)", joined, pos);
}

static PyMethodDef methods[] = {
    {"match_run", (PyCFunction)(void (*)(void))match_run, METH_FASTCALL,
     "match_run(chunk, pos, head, tail, cap) -> (joined bodies, offset after them)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tooltap._core._speedups", "The stream hot path's byte-level step, in C.",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModule_Create(&module);
}
