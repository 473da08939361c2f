/* tooltap._core._speedups: the stream hot path's one byte-level check, in C.
 *
 * match_string(chunk, head, tail) -> bytes | None
 *
 * ``chunk`` is ``head`` (exactly), then the body of a JSON string that is valid on its
 * own (no unescaped quote, no control character, only valid escapes, valid UTF-8) up to
 * its closing quote, then ``tail``, which starts with that quote. Between the tail's bytes
 * the chunk may hold spaces and tabs (JSON whitespace, as providers pad their events),
 * except inside the tail's strings and after its first newline. Returns the body, or
 * None. ``_json._match_string`` is the same function in Python (a regex), used when this
 * module is not built; tests check that the two agree.
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

static PyObject *
match_string(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "match_string(chunk, head, tail) takes 3 arguments");
        return NULL;
    }
    PyObject *chunk = args[0], *head = args[1], *tail = args[2];
    if (!PyBytes_Check(head) || !PyBytes_Check(tail)) {
        PyErr_SetString(PyExc_TypeError, "match_string: head and tail must be bytes");
        return NULL;
    }
    if (PyBytes_GET_SIZE(tail) == 0 || PyBytes_AS_STRING(tail)[0] != '"') {
        PyErr_SetString(PyExc_ValueError, "match_string: tail must start with the closing quote");
        return NULL;
    }
    if (!PyBytes_CheckExact(chunk)) {
        Py_RETURN_NONE;
    }
    const unsigned char *c = (const unsigned char *)PyBytes_AS_STRING(chunk);
    Py_ssize_t n = PyBytes_GET_SIZE(chunk), h = PyBytes_GET_SIZE(head);
    if (n < h || memcmp(c, PyBytes_AS_STRING(head), h) != 0) {
        Py_RETURN_NONE;
    }
    int high = 0;
    Py_ssize_t size = string_body(c + h, n - h, &high);
    if (size < 0
        || !tail_matches(c + h + size, n - h - size, (const unsigned char *)PyBytes_AS_STRING(tail),
                         PyBytes_GET_SIZE(tail))) {
        Py_RETURN_NONE;
    }
    const char *body = (const char *)c + h;
    if (high) {  /* the codec's own strict check: the same verdict as bytes.decode() */
        PyObject *text = PyUnicode_DecodeUTF8(body, size, "strict");
        if (text == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                return NULL;
            }
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        Py_DECREF(text);
    }
    return PyBytes_FromStringAndSize(body, size);
}

static PyMethodDef methods[] = {
    {"match_string", (PyCFunction)(void (*)(void))match_string, METH_FASTCALL,
     "match_string(chunk, head, tail) -> the JSON string body between head and tail, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tooltap._core._speedups", "The stream hot path's byte check, in C.",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModule_Create(&module);
}
