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
 * and after its first newline. In head and tail, byte 0x01 stands for a JSON integer
 * (``0|[1-9][0-9]{0,8}``: OpenAI's sequence numbers) and byte 0x02 for a string body of
 * printable ASCII without escapes (OpenAI's random ``obfuscation``); neither byte occurs
 * in JSON text. Returns the bodies of those events joined, and the offset after the last
 * one (``pos`` when the first event does not match).
 * ``_json._match_run`` is the same function in Python, used when this module is not
 * built; tests check that the two agree.
 *
 * Hot(sse, reducer, fallback, cap, limit): ``StreamParser.hot()``, what the taps call for
 * every chunk. A chunk that is wholly such a run, for the reducer's ``armed`` template
 * while the decoder is ``idle``, is appended to the open run of ``Fragments`` right here,
 * as ``StreamParser.feed`` would (and returns None: no calls); any other chunk goes to
 * ``fallback`` (that ``feed``). The attributes it reads per chunk are ``__slots__`` members,
 * read at their offsets once their descriptors are known (``Slot``).
 *
 * Tap(stream, state, received, broken, settle): the sync tap proxy's loop
 * (``tap_stream.TapSyncStream.__iter__``; its generator is the pure Python twin). An
 * iterator over ``stream``'s chunks, each handed on unchanged after ``state.hot(chunk)``;
 * calls it returns go to ``received``, an exception it raises to ``broken`` (never to the
 * app). ``settle(end, exc)`` runs once, on the first of: exhausted, error (the exception
 * is re-raised), ``close()`` or collection of a started iterator (``closed``), as the
 * generator's ``GeneratorExit`` would.
 *
 * ATap(stream, state, received, broken, settle): the same for an async stream
 * (``TapAsyncStream.__aiter__``; its async generator is the twin). Each ``__anext__()`` is
 * an awaitable step that forwards send/throw/close to the inner ``__anext__()`` awaitable
 * and runs tooltap's step on the chunk it returns; the inner iterator's end settles as
 * ``exhausted``, GeneratorExit or asyncio's CancelledError as ``closed``, any other
 * exception as ``error`` (all re-raised). ``aclose()`` settles ``closed`` (if started)
 * and returns the inner iterator's ``aclose()``.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
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

#define SLOT_INT 0x01
#define SLOT_PLAIN 0x02

/* The length of what slot ``kind`` takes at the start of s[0:n] (possessively), or -1. */
static Py_ssize_t
slot_span(unsigned char kind, const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    if (kind == SLOT_PLAIN) {
        while (i < n && s[i] >= 0x20 && s[i] <= 0x7e && s[i] != '"' && s[i] != '\\') {
            i++;
        }
        return i;
    }
    if (n < 1 || s[0] < '0' || s[0] > '9') {
        return -1;
    }
    if (s[0] == '0') {
        return 1;
    }
    for (i = 1; i < n && i < 9 && s[i] >= '0' && s[i] <= '9'; i++) {
    }
    return i;
}

/* The first slot byte in s[0:n], or NULL. */
static const unsigned char *
next_slot(const unsigned char *s, Py_ssize_t n)
{
    const unsigned char *a = memchr(s, SLOT_INT, (size_t)n);
    const unsigned char *b = memchr(s, SLOT_PLAIN, (size_t)(a == NULL ? n : a - s));
    return b != NULL ? b : a;
}

/* The length of the start of ev[0:n] that is head[0:h] (its slots filled), or -1. */
static Py_ssize_t
head_matches(const unsigned char *ev, Py_ssize_t n, const unsigned char *head, Py_ssize_t h)
{
    Py_ssize_t i = 0, j = 0;
    while (j < h) {
        const unsigned char *slot = next_slot(head + j, h - j);
        Py_ssize_t fixed = (slot == NULL ? head + h : slot) - (head + j);
        if (n - i < fixed || memcmp(ev + i, head + j, (size_t)fixed) != 0) {
            return -1;
        }
        i += fixed;
        j += fixed;
        if (slot != NULL) {
            Py_ssize_t size = slot_span(*slot, ev + i, n - i);
            if (size < 0) {
                return -1;
            }
            i += size;
            j++;
        }
    }
    return i;
}

/* 1 when r[0:n] is tail[0:t] (its slots filled) with spaces and tabs where the header
 * comment allows. */
static int
tail_matches(const unsigned char *r, Py_ssize_t n, const unsigned char *tail, Py_ssize_t t)
{
    /* Unpadded, the usual case: a few memcmp. (A tail with its own spaces or tabs takes
     * the loop below, where padding before them is taken greedily.) */
    if (memchr(tail, ' ', (size_t)t) == NULL && memchr(tail, '\t', (size_t)t) == NULL
        && head_matches(r, n, tail, t) == n) {
        return 1;
    }
    Py_ssize_t i = 0, j = 0;
    int in_string = 0, newline = 0;
    while (j < t) {
        if (j > 0 && !in_string && !newline && i < n && (r[i] == ' ' || r[i] == '\t')) {
            i++;
            continue;
        }
        if (tail[j] == SLOT_INT || tail[j] == SLOT_PLAIN) {
            Py_ssize_t size = slot_span(tail[j], r + i, n - i);
            if (size < 0) {
                return 0;
            }
            i += size;
            j++;
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

/* The length of the body when ev[0:n] is head + string body + tail, else -1; *start set
 * to the body's offset. */
static Py_ssize_t
match_event(const unsigned char *ev, Py_ssize_t n, const unsigned char *head, Py_ssize_t h,
            const unsigned char *tail, Py_ssize_t t, Py_ssize_t *start)
{
    h = head_matches(ev, n, head, h);
    if (h < 0) {
        return -1;
    }
    *start = h;
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

/* Spans kept on the caller's stack before collect() allocates: one read rarely holds more. */
#define LOCAL_SPANS 16

/* The (offset, length) spans of the bodies of the matching events of c[pos:n] (see the
 * header), in *spans (``local``, LOCAL_SPANS pairs, until more are needed: then PyMem,
 * which the caller frees when *spans != local; *count of them, *total bytes); returns the
 * offset after the last, or -1 with MemoryError set. */
static Py_ssize_t
collect(const unsigned char *c, Py_ssize_t pos, Py_ssize_t n, PyObject *head, PyObject *tail,
        Py_ssize_t cap, Py_ssize_t *local, Py_ssize_t **spans, Py_ssize_t *count,
        Py_ssize_t *total)
{
    const unsigned char *hd = (const unsigned char *)PyBytes_AS_STRING(head);
    const unsigned char *tl = (const unsigned char *)PyBytes_AS_STRING(tail);
    Py_ssize_t h = PyBytes_GET_SIZE(head), t = PyBytes_GET_SIZE(tail), room = LOCAL_SPANS;
    *spans = local;
    *count = *total = 0;
    while (pos < n) {
        Py_ssize_t stop = blank_line(c, pos, n);
        if (stop < 0 || stop - pos > cap) {
            break;
        }
        Py_ssize_t start, size = match_event(c + pos, stop - pos, hd, h, tl, t, &start);
        if (size < 0) {
            break;
        }
        if (*count == room) {
            size_t bytes = (size_t)room * 4 * sizeof(Py_ssize_t);
            Py_ssize_t *grown = *spans == local ? PyMem_Malloc(bytes) : PyMem_Realloc(*spans, bytes);
            if (grown == NULL) {
                if (*spans != local) {
                    PyMem_Free(*spans);
                }
                *spans = local;
                PyErr_NoMemory();
                return -1;
            }
            if (*spans == local) {
                memcpy(grown, local, (size_t)room * 2 * sizeof(Py_ssize_t));
            }
            *spans = grown;
            room *= 2;
        }
        (*spans)[2 * *count] = pos + start;
        (*spans)[2 * *count + 1] = size;
        (*count)++;
        *total += size;
        pos = stop;
    }
    return pos;
}

static void
free_spans(Py_ssize_t *spans, Py_ssize_t *local)
{
    if (spans != local) {
        PyMem_Free(spans);
    }
}

static void
copy_spans(char *out, const unsigned char *c, const Py_ssize_t *spans, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++) {
        memcpy(out, c + spans[2 * i], (size_t)spans[2 * i + 1]);
        out += spans[2 * i + 1];
    }
}

/* 1 when head and tail are bytes and tail starts with the closing quote. */
static int
template_ok(PyObject *head, PyObject *tail)
{
    return PyBytes_Check(head) && PyBytes_Check(tail) && PyBytes_GET_SIZE(tail) > 0
           && PyBytes_AS_STRING(tail)[0] == '"';
}

static PyObject *
match_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
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
    if (!template_ok(head, tail)) {
        PyErr_SetString(PyExc_ValueError, "match_run: tail must start with the closing quote");
        return NULL;
    }
    if (!PyBytes_CheckExact(chunk) || pos < 0) {
        return Py_BuildValue("(yn)", "", pos);
    }
    const unsigned char *c = (const unsigned char *)PyBytes_AS_STRING(chunk);
    Py_ssize_t count, total, *spans, local[2 * LOCAL_SPANS];
    Py_ssize_t end = collect(c, pos, PyBytes_GET_SIZE(chunk), head, tail, cap, local, &spans,
                             &count, &total);
    if (end < 0) {
        return NULL;
    }
    PyObject *joined = PyBytes_FromStringAndSize(NULL, total);
    if (joined != NULL) {
        copy_spans(PyBytes_AS_STRING(joined), c, spans, count);
    }
    free_spans(spans, local);
    if (joined == NULL) {
        return NULL;
    }
    return Py_BuildValue("(Nn)", joined, end);
}

/* --- Slot: a ``__slots__`` member read at its offset -------------------------------- */

/* The member ``name`` of objects of one type: ``type`` (a strong reference) is the type
 * whose descriptor was read, NULL while unknown or when it is not a plain writable slot
 * of a type with the generic attribute protocol (then the attribute is looked up). */
typedef struct {
    PyTypeObject *type;
    Py_ssize_t offset;
} Slot;

static int
slot_resolve(Slot *slot, PyTypeObject *tp, PyObject *name)
{
    Py_CLEAR(slot->type);
    if (tp->tp_getattro != PyObject_GenericGetAttr || tp->tp_setattro != PyObject_GenericSetAttr) {
        return 0;
    }
    PyObject *descr = _PyType_Lookup(tp, name); /* borrowed */
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        return 0;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != T_OBJECT_EX || (member->flags & READONLY)) {
        return 0;
    }
    Py_INCREF(tp);
    slot->type = tp;
    slot->offset = member->offset;
    return 1;
}

/* ``obj.name``, a new reference; NULL (no error set) when unset or unreadable. */
static PyObject *
slot_get(Slot *slot, PyObject *obj, PyObject *name)
{
    if (Py_TYPE(obj) != slot->type && !slot_resolve(slot, Py_TYPE(obj), name)) {
        PyObject *value = PyObject_GetAttr(obj, name);
        if (value == NULL) {
            PyErr_Clear();
        }
        return value;
    }
    PyObject *value = *(PyObject **)((char *)obj + slot->offset);
    Py_XINCREF(value);
    return value;
}

/* ``obj.name = value``; 0, or -1 with an error set. */
static int
slot_set(Slot *slot, PyObject *obj, PyObject *name, PyObject *value)
{
    if (Py_TYPE(obj) != slot->type && !slot_resolve(slot, Py_TYPE(obj), name)) {
        return PyObject_SetAttr(obj, name, value);
    }
    PyObject **field = (PyObject **)((char *)obj + slot->offset);
    PyObject *old = *field;
    Py_INCREF(value);
    *field = value;
    Py_XDECREF(old);
    return 0;
}

/* --- Hot: StreamParser.feed's common case, whole ------------------------------------ */

static PyObject *str_idle, *str_armed, *str_run, *str_size;

typedef struct {
    PyObject_HEAD
    PyObject *sse;      /* the parser's SSE decoder (``idle``) */
    PyObject *reducer;  /* its reducer (``armed``) */
    PyObject *fallback; /* the parser's ``feed`` */
    Py_ssize_t cap, limit;
    Slot idle, armed, run, size;
    vectorcallfunc vectorcall;
} HotObject;

/* Apply a chunk that is wholly a run of armed deltas to the open run; 1 if done, 0 if the
 * chunk is not one (nothing changed), -1 on MemoryError. */
static int
hot_apply(HotObject *self, PyObject *chunk)
{
    int done = 0;
    PyObject *idle = slot_get(&self->idle, self->sse, str_idle);
    int is_idle = idle == Py_True;
    Py_XDECREF(idle);
    if (!is_idle) {
        return 0;
    }
    PyObject *armed = slot_get(&self->armed, self->reducer, str_armed);
    if (armed == NULL) {
        return 0;
    }
    PyObject *run = NULL, *size_obj = NULL, *new_size = NULL;
    Py_ssize_t count = 0, total = 0, *spans = NULL, local[2 * LOCAL_SPANS];
    if (!PyTuple_CheckExact(armed) || PyTuple_GET_SIZE(armed) != 3
        || !template_ok(PyTuple_GET_ITEM(armed, 0), PyTuple_GET_ITEM(armed, 1))) {
        goto out;
    }
    const unsigned char *c = (const unsigned char *)PyBytes_AS_STRING(chunk);
    Py_ssize_t n = PyBytes_GET_SIZE(chunk);
    Py_ssize_t end = collect(c, 0, n, PyTuple_GET_ITEM(armed, 0), PyTuple_GET_ITEM(armed, 1),
                             self->cap, local, &spans, &count, &total);
    if (end < 0) {
        done = -1;
        goto out;
    }
    if (count == 0 || end != n) {
        goto out;
    }
    PyObject *fragments = PyTuple_GET_ITEM(armed, 2);
    run = slot_get(&self->run, fragments, str_run);
    size_obj = run == NULL ? NULL : slot_get(&self->size, fragments, str_size);
    if (size_obj == NULL || !PyByteArray_CheckExact(run) || !PyLong_CheckExact(size_obj)) {
        goto out;
    }
    Py_ssize_t size = PyLong_AsSsize_t(size_obj);
    if (size == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        goto out;
    }
    if (size + total > self->limit) {
        goto out;
    }
    new_size = PyLong_FromSsize_t(size + total);
    if (new_size == NULL) {
        done = -1;
        goto out;
    }
    Py_ssize_t old = PyByteArray_GET_SIZE(run);
    if (PyByteArray_Resize(run, old + total) < 0) {
        done = -1;
        goto out;
    }
    if (slot_set(&self->size, fragments, str_size, new_size) < 0) { /* undo: nothing changed */
        PyErr_Clear();
        if (PyByteArray_Resize(run, old) < 0) {
            done = -1;
        }
        goto out;
    }
    copy_spans(PyByteArray_AS_STRING(run) + old, c, spans, count);
    done = 1;
out:
    if (spans != NULL) {
        free_spans(spans, local);
    }
    Py_XDECREF(new_size);
    Py_XDECREF(size_obj);
    Py_XDECREF(run);
    Py_DECREF(armed);
    return done;
}

static PyObject *
hot_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    HotObject *self = (HotObject *)op;
    if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "Hot takes one chunk");
        return NULL;
    }
    if (PyBytes_CheckExact(args[0])) {
        int done = hot_apply(self, args[0]);
        if (done < 0) {
            return NULL;
        }
        if (done) {
            Py_RETURN_NONE;
        }
    }
    return PyObject_Vectorcall(self->fallback, args, 1, NULL);
}

static PyObject *
hot_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *sse, *reducer, *fallback;
    Py_ssize_t cap, limit;
    static char *names[] = {"sse", "reducer", "fallback", "cap", "limit", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOnn:Hot", names, &sse, &reducer, &fallback,
                                     &cap, &limit)) {
        return NULL;
    }
    HotObject *self = (HotObject *)type->tp_alloc(type, 0); /* zeroed: no Slot known yet */
    if (self == NULL) {
        return NULL;
    }
    Py_INCREF(sse);
    Py_INCREF(reducer);
    Py_INCREF(fallback);
    self->sse = sse;
    self->reducer = reducer;
    self->fallback = fallback;
    self->cap = cap;
    self->limit = limit;
    self->vectorcall = hot_vectorcall;
    return (PyObject *)self;
}

static int
hot_traverse(HotObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->sse);
    Py_VISIT(self->reducer);
    Py_VISIT(self->fallback);
    Py_VISIT(self->idle.type);
    Py_VISIT(self->armed.type);
    Py_VISIT(self->run.type);
    Py_VISIT(self->size.type);
    return 0;
}

static int
hot_clear(HotObject *self)
{
    Py_CLEAR(self->sse);
    Py_CLEAR(self->reducer);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->idle.type);
    Py_CLEAR(self->armed.type);
    Py_CLEAR(self->run.type);
    Py_CLEAR(self->size.type);
    return 0;
}

static void
hot_dealloc(HotObject *self)
{
    PyObject_GC_UnTrack(self);
    hot_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject HotType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tooltap._core._speedups.Hot",
    .tp_doc = "Hot(sse, reducer, fallback, cap, limit): call with a chunk. A chunk that is\n"
              "wholly a run of the reducer's armed deltas, with the decoder idle, is appended\n"
              "to the open run here (StreamParser.feed's common case; returns None); any\n"
              "other goes to fallback (the parser's feed).",
    .tp_basicsize = sizeof(HotObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = hot_new,
    .tp_dealloc = (destructor)hot_dealloc,
    .tp_traverse = (traverseproc)hot_traverse,
    .tp_clear = (inquiry)hot_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(HotObject, vectorcall),
};

/* --- Tap: the sync tap proxy's loop ------------------------------------------------- */

static PyObject *str_hot, *str_exhausted, *str_closed, *str_error;

typedef struct {
    PyObject_HEAD
    PyObject *stream;   /* the wrapped stream, until the first next() takes its iterator */
    PyObject *inner;    /* that iterator, until the end */
    PyObject *state;    /* the TapState: ``hot`` read per chunk */
    PyObject *received; /* op.calls_received */
    PyObject *broken;   /* state.broken */
    PyObject *settle;   /* settle(end, exc): never raises (tooltap's quietly) */
    Slot hot;
    int started, done;
} TapObject;

/* The end: ``settle(end, exc)`` once, then let go of the stream; an error set by the
 * caller is kept as it was. */
static void
tap_end(TapObject *self, PyObject *end, PyObject *exc)
{
    self->done = 1;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *result = PyObject_CallFunctionObjArgs(self->settle, end, exc, NULL);
    if (result == NULL) {
        PyErr_Clear();
    }
    Py_XDECREF(result);
    Py_CLEAR(self->inner);
    Py_CLEAR(self->stream);
    PyErr_Restore(type, value, tb);
}

/* The exception set now, normalized (with its traceback attached): fetched into the three. */
static void
fetch(PyObject **type, PyObject **value, PyObject **tb)
{
    PyErr_Fetch(type, value, tb);
    PyErr_NormalizeException(type, value, tb);
    if (*tb != NULL) {
        PyException_SetTraceback(*value, *tb);
    }
}

/* The stream (or the app, through a BaseException in tooltap's code) broke the read:
 * settle as ``error`` with the exception, which stays set for the app. */
static void
tap_failed(TapObject *self)
{
    PyObject *type, *value, *tb;
    fetch(&type, &value, &tb);
    PyErr_Restore(type, value, tb);
    Py_INCREF(value);
    tap_end(self, str_error, value);
    Py_DECREF(value);
}

/* tooltap's own step raised: an Exception goes to ``broken`` and is cleared (1); any
 * other BaseException (KeyboardInterrupt) stays set (0), as the generator lets it out. */
static int
tap_contained(TapObject *self)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception)) {
        return 0;
    }
    PyObject *type, *value, *tb;
    fetch(&type, &value, &tb);
    PyObject *result = PyObject_CallOneArg(self->broken, value);
    if (result == NULL) {
        PyErr_Clear();
    }
    Py_XDECREF(result);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return 1;
}

/* ``state.hot(chunk)`` and the calls it returns to ``received``; 0, or -1 with a
 * BaseException set that must reach the app. */
static int
tap_step(TapObject *self, PyObject *chunk)
{
    PyObject *hot = slot_get(&self->hot, self->state, str_hot);
    if (hot == NULL) {
        return 0;
    }
    PyObject *calls = PyObject_Vectorcall(hot, &chunk, 1, NULL);
    Py_DECREF(hot);
    if (calls == NULL) {
        return tap_contained(self) ? 0 : -1;
    }
    int any = calls == Py_None ? 0
              : PyList_CheckExact(calls) ? PyList_GET_SIZE(calls) > 0
                                         : PyObject_IsTrue(calls);
    if (any > 0) {
        PyObject *result = PyObject_CallOneArg(self->received, calls);
        if (result == NULL) {
            any = -1;
        }
        Py_XDECREF(result);
    }
    Py_DECREF(calls);
    if (any < 0) {
        return tap_contained(self) ? 0 : -1;
    }
    return 0;
}

static PyObject *
tap_next(TapObject *self)
{
    if (self->done) {
        return NULL;
    }
    if (!self->started) {
        self->started = 1;
        self->inner = PyObject_GetIter(self->stream);
        Py_CLEAR(self->stream);
        if (self->inner == NULL) {
            tap_failed(self);
            return NULL;
        }
    }
    PyObject *chunk = PyIter_Next(self->inner);
    if (chunk == NULL) {
        if (PyErr_Occurred()) {
            tap_failed(self);
        } else {
            tap_end(self, str_exhausted, Py_None);
        }
        return NULL;
    }
    if (tap_step(self, chunk) < 0) {
        Py_DECREF(chunk);
        tap_failed(self);
        return NULL;
    }
    return chunk;
}

static PyObject *
tap_close(TapObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->done) {
        if (self->started) {
            tap_end(self, str_closed, Py_None);
        } else { /* as a generator closed before it ran: nothing was read, nothing to settle */
            self->done = 1;
            Py_CLEAR(self->stream);
        }
    }
    Py_RETURN_NONE;
}

static void
tap_finalize(TapObject *self)
{
    if (self->started && !self->done) {
        tap_end(self, str_closed, Py_None); /* keeps any error set: safe in a finalizer */
    }
}

static PyObject *
tap_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *stream, *state, *received, *broken, *settle;
    static char *names[] = {"stream", "state", "received", "broken", "settle", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOO:Tap", names, &stream, &state,
                                     &received, &broken, &settle)) {
        return NULL;
    }
    TapObject *self = (TapObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    Py_INCREF(stream);
    Py_INCREF(state);
    Py_INCREF(received);
    Py_INCREF(broken);
    Py_INCREF(settle);
    self->stream = stream;
    self->state = state;
    self->received = received;
    self->broken = broken;
    self->settle = settle;
    return (PyObject *)self;
}

static int
tap_traverse(TapObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->stream);
    Py_VISIT(self->inner);
    Py_VISIT(self->state);
    Py_VISIT(self->received);
    Py_VISIT(self->broken);
    Py_VISIT(self->settle);
    Py_VISIT(self->hot.type);
    return 0;
}

static int
tap_clear(TapObject *self)
{
    Py_CLEAR(self->stream);
    Py_CLEAR(self->inner);
    Py_CLEAR(self->state);
    Py_CLEAR(self->received);
    Py_CLEAR(self->broken);
    Py_CLEAR(self->settle);
    Py_CLEAR(self->hot.type);
    return 0;
}

static void
tap_dealloc(TapObject *self)
{
    if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0) {
        return; /* resurrected by its finalizer */
    }
    PyObject_GC_UnTrack(self);
    tap_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef tap_methods[] = {
    {"close", (PyCFunction)tap_close, METH_NOARGS,
     "Stop: settle as closed if reading had started (a generator's close())."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tooltap._core._speedups.Tap",
    .tp_doc = "Tap(stream, state, received, broken, settle): iterate stream's chunks, each\n"
              "handed on unchanged after state.hot(chunk); its calls go to received, its\n"
              "exceptions to broken; settle(end, exc) runs once at the end.",
    .tp_basicsize = sizeof(TapObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = tap_new,
    .tp_dealloc = (destructor)tap_dealloc,
    .tp_traverse = (traverseproc)tap_traverse,
    .tp_clear = (inquiry)tap_clear,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)tap_next,
    .tp_methods = tap_methods,
    .tp_finalize = (destructor)tap_finalize,
};

/* --- ATap: the async tap proxy's loop ----------------------------------------------- */

static PyObject *str_throw, *str_close, *str_aclose, *str_value;
static PyObject *cancelled_error; /* asyncio.CancelledError, looked up by the first ATap */

typedef struct {
    PyObject_HEAD
    TapObject *tap; /* the ATap whose step this is; NULL for an awaitable already done */
    PyObject *it;   /* the iterator of the inner ``__anext__()`` awaitable; NULL when done */
} StepObject;

static PyTypeObject StepType;

/* The inner iterator raised (the exception is set, and stays set): its end
 * (StopAsyncIteration), the app's stop (GeneratorExit, CancelledError) or a failure,
 * settled as the Python twin's handlers do. */
static void
atap_raised(TapObject *tap)
{
    if (tap->done) {
        return;
    }
    if (PyErr_ExceptionMatches(PyExc_StopAsyncIteration)) {
        tap_end(tap, str_exhausted, Py_None);
    } else if (PyErr_ExceptionMatches(PyExc_GeneratorExit)
               || (cancelled_error != NULL && PyErr_ExceptionMatches(cancelled_error))) {
        tap_end(tap, str_closed, Py_None);
    } else {
        tap_failed(tap);
    }
}

/* After a send or throw into the inner awaitable: the chunk it returned (*result) takes
 * tooltap's step; an exception settles the tap; a value it yielded (to the event loop)
 * passes through. */
static PySendResult
step_after(StepObject *self, PySendResult r, PyObject **result)
{
    TapObject *tap = self->tap;
    if (r == PYGEN_RETURN && !tap->done && tap_step(tap, *result) < 0) {
        Py_CLEAR(*result);
        tap_failed(tap);
        return PYGEN_ERROR;
    }
    if (r == PYGEN_ERROR) {
        atap_raised(tap);
    }
    return r;
}

static PySendResult
step_send(StepObject *self, PyObject *arg, PyObject **result)
{
    if (self->it == NULL) {
        *result = Py_NewRef(Py_None);
        return PYGEN_RETURN;
    }
    return step_after(self, PyIter_Send(self->it, arg, result), result);
}

/* A send's outcome as an iterator method gives it: the yielded value, or NULL with
 * StopIteration(the awaitable's value) or the exception set. */
static PyObject *
step_result(PySendResult r, PyObject *result)
{
    if (r == PYGEN_NEXT) {
        return result;
    }
    if (r == PYGEN_RETURN) {
        PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, result);
        Py_DECREF(result);
        if (stop != NULL) {
            PyErr_SetObject(PyExc_StopIteration, stop);
            Py_DECREF(stop);
        }
    }
    return NULL;
}

static PySendResult
step_am_send(StepObject *self, PyObject *arg, PyObject **result)
{
    return step_send(self, arg, result);
}

static PyObject *
step_iternext(StepObject *self)
{
    PyObject *result = NULL;
    PySendResult r = step_send(self, Py_None, &result);
    return step_result(r, result);
}

static PyObject *
step_send_method(StepObject *self, PyObject *arg)
{
    PyObject *result = NULL;
    PySendResult r = step_send(self, arg, &result);
    return step_result(r, result);
}

/* throw(type[, value[, traceback]]): into the inner awaitable (a task's cancellation). */
static PyObject *
step_throw(StepObject *self, PyObject *args)
{
    PyObject *typ, *val = Py_None, *tb = Py_None;
    if (!PyArg_UnpackTuple(args, "throw", 1, 3, &typ, &val, &tb)) {
        return NULL;
    }
    PyObject *throw = self->it == NULL ? NULL : PyObject_GetAttr(self->it, str_throw);
    if (throw == NULL) { /* done, or no throw(): raise it here, as a finished awaitable */
        PyErr_Clear();
        if (PyExceptionInstance_Check(typ)) {
            PyErr_SetObject((PyObject *)Py_TYPE(typ), typ);
        } else if (PyExceptionClass_Check(typ)) {
            PyErr_SetObject(typ, val == Py_None ? NULL : val);
        } else {
            PyErr_SetString(PyExc_TypeError, "exceptions must derive from BaseException");
        }
        if (self->tap != NULL) {
            atap_raised(self->tap);
        }
        return NULL;
    }
    PyObject *result = PyObject_Call(throw, args, NULL);
    Py_DECREF(throw);
    PySendResult r = PYGEN_NEXT;
    if (result == NULL) {
        r = PYGEN_ERROR;
        if (PyErr_ExceptionMatches(PyExc_StopIteration)) {
            PyObject *type, *value, *trace;
            fetch(&type, &value, &trace);
            result = PyObject_GetAttr(value, str_value);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(trace);
            r = result == NULL ? PYGEN_ERROR : PYGEN_RETURN;
        }
    }
    return step_result(step_after(self, r, &result), result);
}

static PyObject *
step_close(StepObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *close = self->it == NULL ? NULL : PyObject_GetAttr(self->it, str_close);
    if (close == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *result = PyObject_CallNoArgs(close);
    Py_DECREF(close);
    return result;
}

static PyObject *
step_await(StepObject *self)
{
    return Py_NewRef(self);
}

static StepObject *
step_new(TapObject *tap, PyObject *it)
{
    StepObject *step = PyObject_GC_New(StepObject, &StepType);
    if (step == NULL) {
        Py_XDECREF(it);
        return NULL;
    }
    step->tap = (TapObject *)Py_XNewRef(tap);
    step->it = it; /* stolen */
    PyObject_GC_Track(step);
    return step;
}

static int
step_traverse(StepObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->tap);
    Py_VISIT(self->it);
    return 0;
}

static int
step_clear(StepObject *self)
{
    Py_CLEAR(self->tap);
    Py_CLEAR(self->it);
    return 0;
}

static void
step_dealloc(StepObject *self)
{
    PyObject_GC_UnTrack(self);
    step_clear(self);
    PyObject_GC_Del(self);
}

static PyAsyncMethods step_async = {
    .am_await = (unaryfunc)step_await,
    .am_send = (sendfunc)step_am_send,
};

static PyMethodDef step_methods[] = {
    {"send", (PyCFunction)step_send_method, METH_O, "Send into the inner awaitable."},
    {"throw", (PyCFunction)step_throw, METH_VARARGS, "Throw into the inner awaitable."},
    {"close", (PyCFunction)step_close, METH_NOARGS, "Close the inner awaitable."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject StepType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tooltap._core._speedups.ATapStep",
    .tp_doc = "One awaited step of an ATap: the inner __anext__() awaitable, then tooltap's\n"
              "step on the chunk it returns.",
    .tp_basicsize = sizeof(StepObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = (destructor)step_dealloc,
    .tp_traverse = (traverseproc)step_traverse,
    .tp_clear = (inquiry)step_clear,
    .tp_as_async = &step_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)step_iternext,
    .tp_methods = step_methods,
};

/* __anext__: an awaitable step over the inner iterator's next chunk. */
static PyObject *
atap_anext(TapObject *self)
{
    if (self->done) {
        PyErr_SetNone(PyExc_StopAsyncIteration);
        return NULL;
    }
    if (!self->started) {
        self->started = 1;
        self->inner = PyObject_GetAIter(self->stream);
        Py_CLEAR(self->stream);
        if (self->inner == NULL) {
            tap_failed(self);
            return NULL;
        }
    }
    PyTypeObject *tp = Py_TYPE(self->inner);
    PyObject *awaitable = tp->tp_as_async != NULL && tp->tp_as_async->am_anext != NULL
                              ? tp->tp_as_async->am_anext(self->inner)
                              : PyObject_CallMethod(self->inner, "__anext__", NULL);
    if (awaitable == NULL) {
        atap_raised(self);
        return NULL;
    }
    tp = Py_TYPE(awaitable);
    PyObject *it = tp->tp_as_async != NULL && tp->tp_as_async->am_await != NULL
                       ? tp->tp_as_async->am_await(awaitable)
                       : NULL;
    if (it == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "'async for' received an invalid object from __anext__: %.100s",
                     tp->tp_name);
    }
    Py_DECREF(awaitable);
    if (it == NULL) {
        tap_failed(self);
        return NULL;
    }
    return (PyObject *)step_new(self, it);
}

static PyObject *
atap_aiter(PyObject *self)
{
    return Py_NewRef(self);
}

/* aclose(): settle as closed if reading had started, then the inner iterator's aclose()
 * (awaitable), as the generator's ``finally`` awaits it. */
static PyObject *
atap_aclose(TapObject *self, PyObject *unused)
{
    PyObject *inner = Py_XNewRef(self->inner);
    PyObject *closed = tap_close(self, unused);
    Py_XDECREF(closed);
    PyObject *aclose = inner == NULL ? NULL : PyObject_GetAttr(inner, str_aclose);
    Py_XDECREF(inner);
    if (aclose == NULL) {
        PyErr_Clear();
        return (PyObject *)step_new(NULL, NULL);
    }
    PyObject *awaitable = PyObject_CallNoArgs(aclose);
    Py_DECREF(aclose);
    return awaitable;
}

static PyObject *
atap_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (cancelled_error == NULL) {
        PyObject *asyncio = PyImport_ImportModule("asyncio");
        if (asyncio == NULL) {
            return NULL;
        }
        cancelled_error = PyObject_GetAttrString(asyncio, "CancelledError");
        Py_DECREF(asyncio);
        if (cancelled_error == NULL) {
            return NULL;
        }
    }
    return tap_new(type, args, kwargs);
}

static PyAsyncMethods atap_async = {
    .am_aiter = atap_aiter,
    .am_anext = (unaryfunc)atap_anext,
};

static PyMethodDef atap_methods[] = {
    {"aclose", (PyCFunction)atap_aclose, METH_NOARGS,
     "Stop: settle as closed if reading had started; awaitable (the inner aclose())."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ATapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tooltap._core._speedups.ATap",
    .tp_doc = "ATap(stream, state, received, broken, settle): Tap for an async stream; each\n"
              "__anext__() is an awaitable step over the inner iterator's next chunk.",
    .tp_basicsize = sizeof(TapObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = atap_new,
    .tp_dealloc = (destructor)tap_dealloc,
    .tp_traverse = (traverseproc)tap_traverse,
    .tp_clear = (inquiry)tap_clear,
    .tp_as_async = &atap_async,
    .tp_methods = atap_methods,
    .tp_finalize = (destructor)tap_finalize,
};

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
    str_idle = PyUnicode_InternFromString("idle");
    str_armed = PyUnicode_InternFromString("armed");
    str_run = PyUnicode_InternFromString("run");
    str_size = PyUnicode_InternFromString("size");
    str_hot = PyUnicode_InternFromString("hot");
    str_exhausted = PyUnicode_InternFromString("exhausted");
    str_closed = PyUnicode_InternFromString("closed");
    str_error = PyUnicode_InternFromString("error");
    str_throw = PyUnicode_InternFromString("throw");
    str_close = PyUnicode_InternFromString("close");
    str_aclose = PyUnicode_InternFromString("aclose");
    str_value = PyUnicode_InternFromString("value");
    if (str_idle == NULL || str_armed == NULL || str_run == NULL || str_size == NULL
        || str_hot == NULL || str_exhausted == NULL || str_closed == NULL || str_error == NULL
        || str_throw == NULL || str_close == NULL || str_aclose == NULL || str_value == NULL
        || PyType_Ready(&HotType) < 0 || PyType_Ready(&TapType) < 0
        || PyType_Ready(&StepType) < 0 || PyType_Ready(&ATapType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddType(m, &HotType) < 0 || PyModule_AddType(m, &TapType) < 0
        || PyModule_AddType(m, &ATapType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
