/* The access-log reader's hot loop, compiled: a chunk of whole lines matched against a
 * log_format's program, one line at a time, into columns (issue 58: speed).
 *
 * sizing/demand/fastscan.py is the only caller and holds the contract; the pure-Python
 * path (sizing/demand/scan.py, one regular expression per format) is the reference, and
 * tests/unit/test_demand_fastscan.py checks that both give the same outputs, byte for byte,
 * on generated and mutated lines of every supported format.
 *
 * The program (built by sizing.demand.formats.compile_format) is a list of ops, each
 * 4 bytes (op, stop, length high, length low) then `length` literal bytes:
 *   L  literal bytes
 *   T  $time_local: one or more bytes up to `stop` (no stop: up to ] or ")
 *   I  $time_iso8601: one or more of [0-9T:+-Z] (matched, not read: the time is $msec's)
 *   M  $msec: digits . digits
 *   R  $request_time: one or more of [0-9.]
 *   S  $status: digits (the first kept)
 *   B  $bytes_sent / $body_bytes_sent: digits, or "-"
 *   N  $connection_requests: digits (maybe none)
 *   U  $ssl_session_reused: one of r . - or nothing
 *   X  a variable not read: up to `stop` (no stop: to the end of the line)
 *   J  the same in a quoted field with escape=json: \-escapes skipped
 * then optional blanks (space, tab, CR) and the end of the line. Each op is possessive:
 * the compiler gives a program only when no op's class holds the byte that follows it,
 * so that taking the longest run is what the regular expression matches too.
 *
 * Built by scripts/build-fastscan (run by scripts/setup); when it is absent, the reader
 * uses the regular expression.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define LATEST 253402300799LL /* the end of 9999 */
#define MAX_OFFSET_MIN (14 * 60) /* sizing.demand.clock.MAX_OFFSET_MIN */

typedef struct {
    char op;
    unsigned char stop; /* 0: none */
    const char *lit;
    Py_ssize_t len;
} Op;

typedef struct {
    const char *t;  /* the time's value ($time_local or $msec's seconds) */
    Py_ssize_t tl;
    const char *f; /* $msec's fraction */
    Py_ssize_t fl;
    const char *rt;
    Py_ssize_t rtl;
    const char *size;
    Py_ssize_t sizel;
    const char *conn;
    Py_ssize_t connl;
    unsigned char status, reused;
} Row;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Match one line [p, e) (no newline in it); 1 when it is in the format. */
static int match_line(const Op *ops, Py_ssize_t nops, const char *p, const char *e, Row *r) {
    for (Py_ssize_t k = 0; k < nops; k++) {
        const Op *o = &ops[k];
        const char *s = p;
        switch (o->op) {
        case 'L':
            if (e - p < o->len || memcmp(p, o->lit, (size_t)o->len) != 0) return 0;
            p += o->len;
            break;
        case 'T':
            if (o->stop) {
                const char *q = memchr(p, o->stop, (size_t)(e - p));
                p = q ? q : e;
            } else {
                while (p < e && *p != ']' && *p != '"') p++;
            }
            if (p == s) return 0;
            if (!r->t) r->t = s, r->tl = p - s;
            break;
        case 'I':
            while (p < e && (is_digit(*p) || *p == 'T' || *p == ':' || *p == '+' || *p == '-' ||
                             *p == 'Z'))
                p++;
            if (p == s) return 0;
            break;
        case 'M':
            while (p < e && is_digit(*p)) p++;
            if (p == s || p == e || *p != '.') return 0;
            r->t = s, r->tl = p - s;
            s = ++p;
            while (p < e && is_digit(*p)) p++;
            if (p == s) return 0;
            r->f = s, r->fl = p - s;
            break;
        case 'R':
            while (p < e && (is_digit(*p) || *p == '.')) p++;
            if (p == s) return 0;
            r->rt = s, r->rtl = p - s;
            break;
        case 'S':
            while (p < e && is_digit(*p)) p++;
            if (p == s) return 0;
            r->status = (unsigned char)*s;
            break;
        case 'B':
            if (p < e && is_digit(*p)) {
                while (p < e && is_digit(*p)) p++;
            } else if (p < e && *p == '-') {
                p++;
            } else {
                return 0;
            }
            r->size = s, r->sizel = p - s;
            break;
        case 'N':
            while (p < e && is_digit(*p)) p++;
            r->conn = s, r->connl = p - s;
            break;
        case 'U':
            if (p < e && (*p == 'r' || *p == '.' || *p == '-')) r->reused = (unsigned char)*p++;
            break;
        case 'X':
            if (o->stop) {
                const char *q = memchr(p, o->stop, (size_t)(e - p));
                p = q ? q : e;
            } else {
                p = e;
            }
            break;
        case 'J':
            for (;;) {
                while (p < e && *p != '"' && *p != '\\') p++;
                if (p + 1 < e && *p == '\\') {
                    p += 2;
                    continue;
                }
                break;
            }
            break;
        default:
            return 0;
        }
    }
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    return p == e;
}

static const char *MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* A $time_local of 26 bytes (28/Nov/2026:05:01:04 +0100) in epoch seconds, -1 when it is
 * not one; its offset's slot (0..11999) in *slot. The same checks and arithmetic as
 * sizing.demand.times.local_seconds_array. */
static int64_t local_time(const unsigned char *m, int *slot) {
    static const int digits[16] = {0, 1, 7, 8, 9, 10, 12, 13, 15, 16, 18, 19, 22, 23, 24, 25};
    int d[16];
    for (int i = 0; i < 16; i++) {
        d[i] = m[digits[i]] - '0';
        if (d[i] < 0 || d[i] > 9) return -1;
    }
    if (m[2] != '/' || m[6] != '/' || m[11] != ':' || m[14] != ':' || m[17] != ':' ||
        m[20] != ' ')
        return -1;
    if (m[21] != '+' && m[21] != '-') return -1;
    int mon = 0;
    for (int i = 0; i < 12; i++) {
        if (m[3] == MONTHS[3 * i] && m[4] == MONTHS[3 * i + 1] && m[5] == MONTHS[3 * i + 2]) {
            mon = i + 1;
            break;
        }
    }
    if (!mon) return -1;
    int64_t day = d[0] * 10 + d[1], year = d[2] * 1000 + d[3] * 100 + d[4] * 10 + d[5];
    int64_t hh = d[6] * 10 + d[7], mm = d[8] * 10 + d[9], ss = d[10] * 10 + d[11];
    int64_t oh = d[12] * 10 + d[13], om = d[14] * 10 + d[15];
    if (day < 1 || day > 31 || hh >= 24 || mm >= 60 || ss > 60 || om >= 60) return -1;
    if (oh * 60 + om > MAX_OFFSET_MIN) return -1; /* no clock is set past UTC+-14:00 */
    int64_t y = year - (mon <= 2);
    int64_t era = floordiv(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = floordiv(153 * (mon + (mon > 2 ? -3 : 9)) + 2, 5) + day - 1;
    int64_t days = era * 146097 + yoe * 365 + floordiv(yoe, 4) - floordiv(yoe, 100) + doy - 719468;
    int64_t sign = m[21] == '+' ? 1 : -1;
    int64_t got = days * 86400 + hh * 3600 + mm * 60 + ss - sign * (oh * 3600 + om * 60);
    if (got < 0 || got > LATEST) return -1;
    *slot = (m[21] == '+' ? 0 : 6000) + (int)(oh * 60 + om);
    return got;
}

/* $request_time in ms, -1 when not one (sizing.demand.clock.seconds_ms). */
static int64_t seconds_ms(const char *s, Py_ssize_t n) {
    const char *dot = memchr(s, '.', (size_t)n);
    Py_ssize_t wl = dot ? dot - s : n;
    const char *f = dot ? dot + 1 : s + n;
    Py_ssize_t fl = dot ? n - wl - 1 : 0;
    if (wl > 12 || (wl == 0 && fl == 0)) return -1;
    int64_t v = 0;
    for (Py_ssize_t i = 0; i < wl; i++) v = v * 10 + (s[i] - '0');
    int64_t frac = 0;
    for (int i = 0; i < 3; i++) {
        char c = i < fl ? f[i] : '0';
        if (!is_digit(c)) return -1;
        frac = frac * 10 + (c - '0');
    }
    return v * 1000 + frac;
}

/* A $time_local that numpy's fixed-width view reads (its first 27 bytes, trailing NULs
 * dropped, are 26 long); other lengths are read by the reference, one at a time. */
static int fixed_width(const char *t, Py_ssize_t n) {
    Py_ssize_t k = n < 27 ? n : 27;
    while (k > 0 && t[k - 1] == '\0') k--;
    return k == 26;
}

/* The program's ops into ops (when not NULL: room for all of them); how many there are,
 * -1 when it is not a program. A format has as many ops as it likes (one per variable and
 * per literal between them): counted first, never held to a fixed number. */
static Py_ssize_t parse_program(const char *prog, Py_ssize_t plen, Op *ops) {
    Py_ssize_t n = 0, i = 0;
    while (i + 4 <= plen) {
        Py_ssize_t len = ((unsigned char)prog[i + 2] << 8) | (unsigned char)prog[i + 3];
        if (ops) {
            ops[n].op = prog[i];
            ops[n].stop = (unsigned char)prog[i + 1];
            ops[n].len = len;
            ops[n].lit = prog + i + 4;
        }
        i += 4 + len;
        if (i > plen) return -1;
        n++;
    }
    return i == plen ? n : -1;
}

/* scan(chunk, program, msec) -> (rows, ms, rt, status, first, reused, size, conn, bad, odd,
 * offsets); see sizing/demand/fastscan.py. */
static PyObject *scan(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer chunk, prog;
    int msec;
    if (!PyArg_ParseTuple(args, "y*y*p", &chunk, &prog, &msec)) return NULL;
    Op *ops = NULL;
    Py_ssize_t nops = parse_program(prog.buf, prog.len, NULL);
    PyObject *out = NULL, *bad = NULL, *odd = NULL, *offs = NULL;
    PyObject *cols[7] = {NULL};
    if (nops < 0) {
        PyErr_SetString(PyExc_ValueError, "not a program");
        goto done;
    }
    ops = PyMem_New(Op, nops ? nops : 1);
    if (!ops) {
        PyErr_NoMemory();
        goto done;
    }
    parse_program(prog.buf, prog.len, ops);
    const char *buf = chunk.buf, *end = buf + chunk.len;
    Py_ssize_t rows = 0;
    for (const char *p = buf; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) rows++;
    if (chunk.len == 0 || buf[chunk.len - 1] != '\n') rows++;
    static const int width[7] = {8, 8, 1, 1, 1, 8, 8};
    for (int i = 0; i < 7; i++) {
        cols[i] = PyBytes_FromStringAndSize(NULL, rows * width[i]);
        if (!cols[i]) goto done;
    }
    int64_t *ms = (int64_t *)PyBytes_AS_STRING(cols[0]);
    int64_t *rt = (int64_t *)PyBytes_AS_STRING(cols[1]);
    unsigned char *status = (unsigned char *)PyBytes_AS_STRING(cols[2]);
    unsigned char *first = (unsigned char *)PyBytes_AS_STRING(cols[3]);
    unsigned char *reused = (unsigned char *)PyBytes_AS_STRING(cols[4]);
    int64_t *size = (int64_t *)PyBytes_AS_STRING(cols[5]);
    int64_t *conn = (int64_t *)PyBytes_AS_STRING(cols[6]);
    bad = PyList_New(0), odd = PyList_New(0), offs = PyList_New(0);
    if (!bad || !odd || !offs) goto done;
    static Py_ssize_t seen[12000];
    for (int i = 0; i < 12000; i++) seen[i] = -1;
    const char *p = buf;
    for (Py_ssize_t i = 0; i < rows; i++) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        Row r;
        memset(&r, 0, sizeof r);
        ms[i] = -3, rt[i] = 0, status[i] = first[i] = reused[i] = 0, size[i] = -3, conn[i] = -1;
        if (!match_line(ops, nops, p, e, &r)) {
            PyObject *item = Py_BuildValue("(ny#)", i, p, (Py_ssize_t)(e - p));
            if (!item || PyList_Append(bad, item) < 0) {
                Py_XDECREF(item);
                goto done;
            }
            Py_DECREF(item);
            p = e + 1;
            continue;
        }
        if (msec) {
            if (r.tl > 12) {
                ms[i] = -1;
            } else {
                int64_t v = 0, f = 0;
                for (Py_ssize_t k = 0; k < r.tl; k++) v = v * 10 + (r.t[k] - '0');
                Py_ssize_t fl = r.fl < 3 ? r.fl : 3;
                for (Py_ssize_t k = 0; k < fl; k++) f = f * 10 + (r.f[k] - '0');
                ms[i] = v * 1000 + f * (fl == 1 ? 100 : fl == 2 ? 10 : 1);
            }
        } else if (fixed_width(r.t, r.tl)) {
            int slot = -1;
            int64_t sec = local_time((const unsigned char *)r.t, &slot);
            ms[i] = sec < 0 ? -1 : sec * 1000 + 500;
            if (slot >= 0 && seen[slot] < 0) {
                seen[slot] = i;
                PyObject *item = Py_BuildValue("(y#n)", r.t + 21, (Py_ssize_t)5, i);
                if (!item || PyList_Append(offs, item) < 0) {
                    Py_XDECREF(item);
                    goto done;
                }
                Py_DECREF(item);
            }
        } else {
            ms[i] = -2;
            PyObject *item = Py_BuildValue("(ny#)", i, r.t, r.tl);
            if (!item || PyList_Append(odd, item) < 0) {
                Py_XDECREF(item);
                goto done;
            }
            Py_DECREF(item);
        }
        if (r.rt) rt[i] = seconds_ms(r.rt, r.rtl);
        status[i] = r.status;
        reused[i] = r.reused;
        if (r.size) {
            if (r.sizel == 1 && r.size[0] == '-') {
                size[i] = 0;
            } else if (r.sizel > 18) {
                size[i] = -2;
            } else {
                int64_t v = 0;
                for (Py_ssize_t k = 0; k < r.sizel; k++) v = v * 10 + (r.size[k] - '0');
                size[i] = v;
            }
        }
        if (r.conn && r.connl) {
            first[i] = r.connl == 1 && r.conn[0] == '1';
            if (r.connl <= 9) {
                int64_t v = 0;
                for (Py_ssize_t k = 0; k < r.connl; k++) v = v * 10 + (r.conn[k] - '0');
                conn[i] = v;
            } else {
                conn[i] = 1 << 30;
            }
        }
        p = e + 1;
    }
    out = Py_BuildValue("(nOOOOOOOOOO)", rows, cols[0], cols[1], cols[2], cols[3], cols[4],
                        cols[5], cols[6], bad, odd, offs);
done:
    PyMem_Free(ops);
    for (int i = 0; i < 7; i++) Py_XDECREF(cols[i]);
    Py_XDECREF(bad);
    Py_XDECREF(odd);
    Py_XDECREF(offs);
    PyBuffer_Release(&chunk);
    PyBuffer_Release(&prog);
    return out;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "A chunk of lines matched against a program, as columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastscan", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fastscan(void) { return PyModule_Create(&module); }
