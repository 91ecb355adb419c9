/* The compiled move generator: Gordon's GADDAG search over the flat uint32 array.
 *
 * This is the C twin of movegen.py (the reference): same anchors, same cross checks,
 * same four mutually recursive walkers, same listing conventions (a play is listed
 * once; a lone tile is the across play when it makes an across word; only across
 * plays on an empty board). One difference in the order of the walk, not in its
 * result: when tiles lie right after an anchor, they are walked first, as the start
 * of the left part, instead of after the separator (see run()); that prunes the
 * left parts that cannot precede them, most of the work in a crowded position. meeple.games.scrabble.native wraps it; nothing else
 * should call it directly, because `generate` trusts a graph `check_graph` passed.
 *
 * Graph layout (gaddag.py): node = offset into `flat`; flat[node] is the mask (bits
 * 0-25 letters, 26 separator, 27 final); flat[node + 1 + k] the k-th arc's target.
 *
 * generate(flat, root, board, size, lm, wm, values, rack, blanks, mode, top,
 *          leave, strides, leave_start, bingo_tiles, bingo_bonus)
 *   board   bytes, size*size, '.' empty, 'A'-'Z' tile, 'a'-'z' blank
 *   lm, wm  bytes, size*size letter / word multipliers (row-major, [y*size+x])
 *   values  bytes, 26 letter values
 *   rack    bytes, 26 letter counts; blanks: number of blanks
 *   mode    0 count (returns int), 1 all plays, 2 best `top` by score,
 *           3 best `top` by equity = score + leave[leave index]
 *   leave   buffer of doubles indexed by the leave index (mode 3), else None
 *   strides bytes, 27: how much the leave index drops per letter used (26 = blank);
 *           leave_start: the index of the whole rack
 *   Returns bytes of RECORD_SIZE records (see Record), best first for modes 2 and 3.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE 31
#define SEP 26
#define SEP_BIT (1u << SEP)
#define FINAL_BIT (1u << 27)
#define LETTER_BITS ((1u << 26) - 1)
#define ARC_BITS (LETTER_BITS | SEP_BIT)

enum { MODE_COUNT = 0, MODE_ALL = 1, MODE_TOP_SCORE = 2, MODE_TOP_EQUITY = 3 };

/* One play, as Python reads it with struct "<iiBBBBI32s". */
typedef struct {
    int32_t score;
    int32_t leave;     /* leave index after the play */
    uint8_t x, y;      /* where the main word starts */
    uint8_t down;      /* 0 across, 1 down */
    uint8_t len;       /* main word length */
    uint32_t newmask;  /* bit i set: square lo + i gets a new tile */
    char word[32];     /* the main word, blanks lower case, NUL padded */
} Record;

typedef struct {
    const uint32_t *g;
    uint32_t root;
    int size;
    const char *board;
    /* the line being searched */
    int index, across;
    int8_t line[MAX_SIZE + 1];
    char chars[MAX_SIZE + 1];
    uint8_t anchors[MAX_SIZE + 1];
    int lm[MAX_SIZE + 1], wm[MAX_SIZE + 1], face[MAX_SIZE + 1], cs[MAX_SIZE + 1];
    uint32_t cc[MAX_SIZE + 1];
    char placed[MAX_SIZE + 1];
    int anchor, anchor_end, limit; /* anchor_end: last square of the run of tiles right of it */
    /* the rack */
    int rack[26], blanks, values[26];
    uint32_t rmask, avail;
    int strides[27], leave_idx;
    int bingo_tiles, bingo_bonus;
    /* output */
    int mode;
    Py_ssize_t count, top, used, cap;
    Record *out;
    const double *leave;
    int failed; /* out of memory */
} Gen;

static inline int popcount32(uint32_t v) { return __builtin_popcount(v); }
static inline int ctz32(uint32_t v) { return __builtin_ctz(v); }

static inline uint32_t child_of(const uint32_t *g, uint32_t node, uint32_t bit) {
    uint32_t m = g[node];
    if (!(m & bit)) return UINT32_MAX;
    return g[node + 1 + popcount32(m & (bit - 1))];
}

/* ---- ranking: higher key first, then across before down, row, column, word ---- */

static inline double key_of(const Gen *G, const Record *r) {
    return G->mode == MODE_TOP_EQUITY ? (double)r->score + G->leave[r->leave] : (double)r->score;
}

/* >0 when a ranks before b */
static int better(const Gen *G, const Record *a, const Record *b) {
    double ka = key_of(G, a), kb = key_of(G, b);
    if (ka != kb) return ka > kb ? 1 : -1;
    if (a->down != b->down) return a->down < b->down ? 1 : -1;
    if (a->y != b->y) return a->y < b->y ? 1 : -1;
    if (a->x != b->x) return a->x < b->x ? 1 : -1;
    int c = strncmp(a->word, b->word, sizeof a->word);
    if (c != 0) return c < 0 ? 1 : -1;
    return 0;
}

/* The heap keeps the worst of the kept records at out[0]. */
static void sift_down(Gen *G, Py_ssize_t i) {
    Py_ssize_t n = G->used;
    for (;;) {
        Py_ssize_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && better(G, &G->out[w], &G->out[l]) > 0) w = l;
        if (r < n && better(G, &G->out[w], &G->out[r]) > 0) w = r;
        if (w == i) return;
        Record t = G->out[i];
        G->out[i] = G->out[w];
        G->out[w] = t;
        i = w;
    }
}

static void sift_up(Gen *G, Py_ssize_t i) {
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (better(G, &G->out[p], &G->out[i]) <= 0) return;
        Record t = G->out[i];
        G->out[i] = G->out[p];
        G->out[p] = t;
        i = p;
    }
}

static const Gen *sort_gen;
static int cmp_records(const void *a, const void *b) {
    return -better(sort_gen, (const Record *)a, (const Record *)b);
}

/* ---- emitting a play ---- */

static void emit(Gen *G, int lo, int hi, int score, int n) {
    if (n == 1 && !G->across && G->cs[G->anchor] >= 0)
        return; /* a lone tile with an across word is listed as the across play */
    if (n == G->bingo_tiles) score += G->bingo_bonus;
    G->count++;
    if (G->mode == MODE_COUNT || G->failed) return;
    if (G->mode != MODE_ALL && G->used == G->top && G->top > 0) {
        /* Most plays rank below the worst kept one: say so before building a record
         * (issue 37). An equal key goes on to the full comparison (the tie-breaks). */
        double key = G->mode == MODE_TOP_EQUITY ? (double)score + G->leave[G->leave_idx]
                                                : (double)score;
        if (key < key_of(G, &G->out[0])) return;
    }
    Record r;
    memset(&r, 0, sizeof r);
    r.score = score;
    r.leave = G->leave_idx;
    r.x = (uint8_t)(G->across ? lo : G->index);
    r.y = (uint8_t)(G->across ? G->index : lo);
    r.down = (uint8_t)!G->across;
    r.len = (uint8_t)(hi - lo + 1);
    for (int p = lo; p <= hi; p++) {
        if (G->placed[p]) {
            r.word[p - lo] = G->placed[p];
            r.newmask |= 1u << (p - lo);
        } else {
            r.word[p - lo] = G->chars[p];
        }
    }
    if (G->mode == MODE_ALL) {
        if (G->used == G->cap) {
            Py_ssize_t cap = G->cap ? 2 * G->cap : 1024;
            Record *grown = realloc(G->out, (size_t)cap * sizeof(Record));
            if (!grown) {
                G->failed = 1;
                return;
            }
            G->out = grown;
            G->cap = cap;
        }
        G->out[G->used++] = r;
        return;
    }
    if (G->used < G->top) {
        G->out[G->used++] = r;
        sift_up(G, G->used - 1);
    } else if (G->top > 0 && better(G, &r, &G->out[0]) > 0) {
        G->out[0] = r;
        sift_down(G, 0);
    }
}

/* ---- the four walkers (see movegen.py for the reasoning) ---- */

static void left_from(Gen *G, int pos, uint32_t node, int main, int wmul, int cross, int n);
static void right_from(Gen *G, int pos, uint32_t node, int lo, int main, int wmul, int cross,
                       int n);

#define PLACE_LOOP(CALL_REAL, CALL_BLANK)                                           \
    const uint32_t *g = G->g;                                                       \
    uint32_t m = g[node];                                                           \
    uint32_t poss = m & G->cc[pos] & G->avail;                                      \
    int lmul = G->lm[pos], wsq = G->wm[pos], csq = G->cs[pos];                      \
    int wmul1 = wmul * wsq, n1 = n + 1;                                             \
    while (poss) {                                                                  \
        uint32_t bit = poss & (~poss + 1);                                          \
        poss ^= bit;                                                                \
        int letter = ctz32(bit);                                                    \
        uint32_t child = g[node + 1 + popcount32(m & (bit - 1))];                   \
        int count = G->rack[letter];                                                \
        if (count) {                                                                \
            G->rack[letter] = count - 1;                                            \
            if (count == 1) {                                                       \
                G->rmask ^= bit;                                                    \
                if (!G->blanks) G->avail = G->rmask;                                \
            }                                                                       \
            int v = G->values[letter] * lmul;                                       \
            G->placed[pos] = (char)('A' + letter);                                  \
            G->leave_idx -= G->strides[letter];                                     \
            int crs = csq >= 0 ? cross + (csq + v) * wsq : cross;                   \
            CALL_REAL;                                                              \
            G->leave_idx += G->strides[letter];                                     \
            G->rack[letter] = count;                                                \
            if (count == 1) {                                                       \
                G->rmask |= bit;                                                    \
                if (!G->blanks) G->avail = G->rmask;                                \
            }                                                                       \
        }                                                                           \
        if (G->blanks) {                                                            \
            G->blanks--;                                                            \
            if (!G->blanks) G->avail = G->rmask;                                    \
            G->placed[pos] = (char)('a' + letter);                                  \
            G->leave_idx -= G->strides[26];                                         \
            int crs = csq >= 0 ? cross + csq * wsq : cross;                         \
            CALL_BLANK;                                                             \
            G->leave_idx += G->strides[26];                                         \
            G->blanks++;                                                            \
            G->avail = LETTER_BITS;                                                 \
        }                                                                           \
    }                                                                               \
    G->placed[pos] = 0;

static void go_left(Gen *G, int pos, uint32_t node, int main, int wmul, int cross, int n) {
    PLACE_LOOP(left_from(G, pos, child, main + v, wmul1, crs, n1),
               left_from(G, pos, child, main, wmul1, crs, n1))
}

static void go_right(Gen *G, int pos, uint32_t node, int lo, int main, int wmul, int cross,
                     int n) {
    PLACE_LOOP(right_from(G, pos, child, lo, main + v, wmul1, crs, n1),
               right_from(G, pos, child, lo, main, wmul1, crs, n1))
}

static void left_from(Gen *G, int pos, uint32_t node, int main, int wmul, int cross, int n) {
    const uint32_t *g = G->g;
    int p = pos - 1;
    while (p >= 0 && G->line[p] >= 0) {
        node = child_of(g, node, 1u << G->line[p]);
        if (node == UINT32_MAX) return;
        main += G->face[p];
        p--;
    }
    uint32_t m = g[node];
    if (m & FINAL_BIT) emit(G, p + 1, G->anchor_end, main * wmul + cross, n);
    if (m & SEP_BIT) {
        uint32_t sep = g[node + 1 + popcount32(m & (SEP_BIT - 1))];
        right_from(G, G->anchor_end, sep, p + 1, main, wmul, cross, n);
    }
    if (p >= G->limit && (m & G->cc[p] & G->avail)) go_left(G, p, node, main, wmul, cross, n);
}

static void right_from(Gen *G, int pos, uint32_t node, int lo, int main, int wmul, int cross,
                       int n) {
    const uint32_t *g = G->g;
    int p = pos + 1;
    while (p < G->size && G->line[p] >= 0) {
        node = child_of(g, node, 1u << G->line[p]);
        if (node == UINT32_MAX) return;
        main += G->face[p];
        p++;
    }
    uint32_t m = g[node];
    if ((m & FINAL_BIT) && p - 1 > G->anchor_end) emit(G, lo, p - 1, main * wmul + cross, n);
    if (p < G->size && (m & G->cc[p] & G->avail)) go_right(G, p, node, lo, main, wmul, cross, n);
}

/* ---- cross checks ---- */

static uint32_t walk(const uint32_t *g, uint32_t node, const int8_t *syms, int k, int step) {
    for (int i = 0; i < k && node != UINT32_MAX; i++) node = child_of(g, node, 1u << syms[i * step]);
    return node;
}

/* Letters L such that before + L + after is a word (movegen._cross_check). */
static uint32_t cross_check(const Gen *G, const int8_t *before, int nb, const int8_t *after,
                            int na) {
    const uint32_t *g = G->g;
    uint32_t node = G->root, result = 0;
    int then_sep;
    if (nb > 0) {
        node = walk(g, node, before + nb - 1, nb, -1);
        if (node == UINT32_MAX) return 0;
        node = child_of(g, node, SEP_BIT);
        if (node == UINT32_MAX) return 0;
        then_sep = 0;
    } else {
        then_sep = 1;
    }
    uint32_t m = g[node], letters = m & LETTER_BITS;
    while (letters) {
        uint32_t bit = letters & (~letters + 1);
        letters ^= bit;
        uint32_t c = g[node + 1 + popcount32(m & (bit - 1))];
        if (then_sep) {
            c = child_of(g, c, SEP_BIT);
            if (c == UINT32_MAX) continue;
        }
        c = walk(g, c, after, na, 1);
        if (c != UINT32_MAX && (g[c] & FINAL_BIT)) result |= bit;
    }
    return result;
}

/* ---- the board ---- */

static inline char cell(const Gen *G, int across, int i, int p) {
    return across ? G->board[i * G->size + p] : G->board[p * G->size + i];
}

static inline int8_t code_of(char c) {
    if (c >= 'A' && c <= 'Z') return (int8_t)(c - 'A');
    if (c >= 'a' && c <= 'z') return (int8_t)(c - 'a');
    return -1;
}

static void run(Gen *G, const uint8_t *lmb, const uint8_t *wmb) {
    int size = G->size;
    int empty = 1;
    for (int k = 0; k < size * size; k++)
        if (code_of(G->board[k]) >= 0) {
            empty = 0;
            break;
        }
    G->rmask = 0;
    for (int l = 0; l < 26; l++)
        if (G->rack[l]) G->rmask |= 1u << l;
    G->avail = G->blanks ? LETTER_BITS : G->rmask;
    int centre = size / 2;
    for (int dir = 0; dir < (empty ? 1 : 2); dir++) {
        int across = dir == 0;
        G->across = across;
        for (int i = 0; i < size; i++) {
            int any = 0;
            for (int p = 0; p < size; p++) {
                char c = cell(G, across, i, p);
                G->line[p] = code_of(c);
                G->chars[p] = c;
                G->placed[p] = 0;
            }
            for (int p = 0; p < size; p++) {
                int a = 0;
                if (empty) {
                    a = i == centre && p == centre;
                } else if (G->line[p] < 0) {
                    a = (p > 0 && G->line[p - 1] >= 0) || (p + 1 < size && G->line[p + 1] >= 0) ||
                        (i > 0 && code_of(cell(G, across, i - 1, p)) >= 0) ||
                        (i + 1 < size && code_of(cell(G, across, i + 1, p)) >= 0);
                }
                G->anchors[p] = (uint8_t)a;
                any |= a;
            }
            if (!any) continue;
            G->index = i;
            for (int p = 0; p < size; p++) {
                int x = across ? p : i, y = across ? i : p;
                G->lm[p] = lmb[y * size + x];
                G->wm[p] = wmb[y * size + x];
                G->cc[p] = LETTER_BITS;
                G->cs[p] = -1;
                G->face[p] = 0;
                if (G->line[p] >= 0) {
                    char c = G->chars[p];
                    G->face[p] = (c >= 'a' && c <= 'z') ? 0 : G->values[(int)G->line[p]];
                    continue;
                }
                int lo = i, hi = i;
                while (lo > 0 && code_of(cell(G, across, lo - 1, p)) >= 0) lo--;
                while (hi + 1 < size && code_of(cell(G, across, hi + 1, p)) >= 0) hi++;
                if (lo == i && hi == i) continue;
                int8_t before[MAX_SIZE + 1], after[MAX_SIZE + 1];
                int nb = 0, na = 0, total = 0;
                for (int q = lo; q <= hi; q++) {
                    if (q == i) continue;
                    char c = cell(G, across, q, p);
                    int8_t code = code_of(c);
                    if (q < i)
                        before[nb++] = code;
                    else
                        after[na++] = code;
                    total += (c >= 'a' && c <= 'z') ? 0 : G->values[(int)code];
                }
                G->cs[p] = total;
                G->cc[p] = cross_check(G, before, nb, after, na);
            }
            for (int a = 0; a < size; a++) {
                if (!G->anchors[a]) continue;
                G->anchor = a;
                int limit = a;
                while (limit > 0 && (G->line[limit - 1] >= 0 || !G->anchors[limit - 1])) limit--;
                G->limit = limit;
                /* Tiles right after the anchor belong to every play through it: walk them
                 * (reversed, as the GADDAG reads a left part) before placing anything, so
                 * the search never tries left parts that cannot precede them. movegen.py
                 * takes them in after the separator instead; the plays are the same. */
                int end = a, main0 = 0;
                while (end + 1 < size && G->line[end + 1] >= 0) end++;
                uint32_t start = G->root;
                for (int q = end; q > a && start != UINT32_MAX; q--) {
                    start = child_of(G->g, start, 1u << G->line[q]);
                    main0 += G->face[q];
                }
                G->anchor_end = end;
                if (start != UINT32_MAX && (G->g[start] & G->cc[a] & G->avail))
                    go_left(G, a, start, main0, 1, 0, 0);
            }
        }
    }
}

/* ---- Python entry points ---- */

static int get_bytes(PyObject *o, Py_ssize_t want, const char *what, Py_buffer *view) {
    if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE) < 0) return -1;
    if (want >= 0 && view->len != want) {
        PyErr_Format(PyExc_ValueError, "%s must be %zd bytes, not %zd", what, want, view->len);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The buffers both generate() and sim_line() read: the graph, the board, the
 * premiums and the letter values; `got` counts those held, for release_inputs(). */
typedef struct {
    Py_buffer flat, board, lm, wm, values;
    int got;
} Inputs;

static int get_inputs(Inputs *in, PyObject *flat, PyObject *board, PyObject *lm, PyObject *wm,
                      PyObject *values, Py_ssize_t cells) {
    in->got = 0;
    if (get_bytes(flat, -1, "flat", &in->flat) < 0) return -1;
    in->got = 1;
    if (get_bytes(board, cells, "board", &in->board) < 0) return -1;
    in->got = 2;
    if (get_bytes(lm, cells, "lm", &in->lm) < 0) return -1;
    in->got = 3;
    if (get_bytes(wm, cells, "wm", &in->wm) < 0) return -1;
    in->got = 4;
    if (get_bytes(values, 26, "values", &in->values) < 0) return -1;
    in->got = 5;
    return 0;
}

static void release_inputs(Inputs *in) {
    Py_buffer *held[] = {&in->flat, &in->board, &in->lm, &in->wm, &in->values};
    while (in->got > 0) PyBuffer_Release(held[--in->got]);
}

static PyObject *check_graph(PyObject *self, PyObject *args) {
    /* Every node's arcs lie inside the array and lead to node starts; the root is one.
     * Done once per graph so `generate` may index without bounds checks. */
    PyObject *flat_obj;
    unsigned long root;
    if (!PyArg_ParseTuple(args, "Ok", &flat_obj, &root)) return NULL;
    Py_buffer fv;
    if (get_bytes(flat_obj, -1, "flat", &fv) < 0) return NULL;
    const uint32_t *g = fv.buf;
    Py_ssize_t n = fv.len / 4;
    int ok = fv.len % 4 == 0 && n > 0;
    uint8_t *starts = ok ? calloc((size_t)n, 1) : NULL;
    if (ok && !starts) {
        PyBuffer_Release(&fv);
        return PyErr_NoMemory();
    }
    Py_ssize_t o = 0;
    while (ok && o < n) {
        uint32_t m = g[o];
        if (m & ~(ARC_BITS | FINAL_BIT)) ok = 0;
        starts[o] = 1;
        o += 1 + popcount32(m & ARC_BITS);
    }
    if (o != n) ok = 0;
    for (o = 0; ok && o < n;) {
        int k = popcount32(g[o] & ARC_BITS);
        for (int j = 1; j <= k; j++)
            if (g[o + j] >= (uint64_t)n || !starts[g[o + j]]) ok = 0;
        o += 1 + k;
    }
    if (ok && (root >= (unsigned long)n || !starts[root])) ok = 0;
    free(starts);
    PyBuffer_Release(&fv);
    return PyBool_FromLong(ok);
}

static PyObject *generate(PyObject *self, PyObject *args) {
    PyObject *flat_obj, *board_obj, *lm_obj, *wm_obj, *values_obj, *rack_obj, *leave_obj,
        *strides_obj;
    unsigned long root;
    int size, blanks, mode, leave_start, bingo_tiles, bingo_bonus;
    Py_ssize_t top;
    if (!PyArg_ParseTuple(args, "OkOiOOOOiinOOiii", &flat_obj, &root, &board_obj, &size, &lm_obj,
                          &wm_obj, &values_obj, &rack_obj, &blanks, &mode, &top, &leave_obj,
                          &strides_obj, &leave_start, &bingo_tiles, &bingo_bonus))
        return NULL;
    if (size < 1 || size > MAX_SIZE) return PyErr_Format(PyExc_ValueError, "bad board size");
    if (mode < MODE_COUNT || mode > MODE_TOP_EQUITY || top < 0 || blanks < 0 || blanks > 64)
        return PyErr_Format(PyExc_ValueError, "bad mode, top or blanks");
    Inputs in;
    Py_buffer rv, sv, ev;
    int got = 5, ok = 0;
    PyObject *result = NULL;
    Gen *G = calloc(1, sizeof(Gen));
    if (!G) return PyErr_NoMemory();
    Py_ssize_t cells = (Py_ssize_t)size * size;
    if (get_inputs(&in, flat_obj, board_obj, lm_obj, wm_obj, values_obj, cells) < 0) goto done;
    if (get_bytes(rack_obj, 26, "rack", &rv) < 0) goto done;
    got = 6;
    if (get_bytes(strides_obj, 27, "strides", &sv) < 0) goto done;
    got = 7;
    if (mode == MODE_TOP_EQUITY) {
        if (leave_obj == Py_None) {
            PyErr_SetString(PyExc_ValueError, "equity ranking needs a leave table");
            goto done;
        }
        if (get_bytes(leave_obj, -1, "leave", &ev) < 0) goto done;
        got = 8;
        if (ev.len % (Py_ssize_t)sizeof(double) || leave_start < 0 ||
            (Py_ssize_t)leave_start >= ev.len / (Py_ssize_t)sizeof(double)) {
            PyErr_SetString(PyExc_ValueError, "leave table too short");
            goto done;
        }
        G->leave = ev.buf;
    }
    if ((Py_ssize_t)root >= in.flat.len / 4) {
        PyErr_SetString(PyExc_ValueError, "root out of range");
        goto done;
    }
    G->g = in.flat.buf;
    G->root = (uint32_t)root;
    G->size = size;
    G->board = in.board.buf;
    G->blanks = blanks;
    for (int l = 0; l < 26; l++) {
        G->rack[l] = ((const uint8_t *)rv.buf)[l];
        G->values[l] = ((const uint8_t *)in.values.buf)[l];
    }
    for (int l = 0; l < 27; l++) G->strides[l] = ((const uint8_t *)sv.buf)[l];
    G->leave_idx = leave_start;
    G->bingo_tiles = bingo_tiles;
    G->bingo_bonus = bingo_bonus;
    G->mode = mode;
    G->top = top;
    if (mode >= MODE_TOP_SCORE && top > 0) {
        G->out = malloc((size_t)top * sizeof(Record));
        if (!G->out) {
            PyErr_NoMemory();
            goto done;
        }
        G->cap = top;
    }
    Py_BEGIN_ALLOW_THREADS
    run(G, in.lm.buf, in.wm.buf);
    Py_END_ALLOW_THREADS
    if (G->failed) {
        PyErr_NoMemory();
        goto done;
    }
    if (mode == MODE_COUNT) {
        result = PyLong_FromSsize_t(G->count);
    } else {
        if (mode >= MODE_TOP_SCORE && G->used > 1) {
            sort_gen = G; /* under the GIL: no other sort runs at once */
            qsort(G->out, (size_t)G->used, sizeof(Record), cmp_records);
        }
        result = PyBytes_FromStringAndSize((const char *)G->out,
                                           G->used * (Py_ssize_t)sizeof(Record));
    }
    ok = 1;
done:
    (void)ok;
    if (got >= 8) PyBuffer_Release(&ev);
    if (got >= 7) PyBuffer_Release(&sv);
    if (got >= 6) PyBuffer_Release(&rv);
    release_inputs(&in);
    free(G->out);
    free(G);
    return result;
}


/* ---- one simulated line (issue 37): the reply, then our answer, on one board ----
 *
 * sim_line(flat, root, board, size, lm, wm, values, bingo_tiles, bingo_bonus,
 *          cache, get, value0, mine, theirs, bag, endgame_plies, blank_value)
 *   -> (value, unseen_after, final)
 * is StrongPlayer._run_once after its first ply (scrabble.py), in C: `board` is the
 * board with the candidate on it, `mine` our rack after it (leave + tiles drawn),
 * `theirs` the opponent's rack, `bag` what is left to draw (drawn from the end),
 * `value0` the candidate's score (its value so far). Each side's play is the best by
 * equity, found by run() with top = 1 on this function's own copy of the board, ranked
 * exactly as `generate` ranks (same leave values, same ties); no play is built as a
 * Python object. Leave values come from `cache` (a capsule from leave_cache()) over
 * `get(leave, 0.0)`, the leave model's method, called only for a leave not seen before;
 * with the bag empty and `endgame_plies` set, a ply ranks by EndgameLeave's values
 * instead (going out: twice the other rack's points; tiles kept: minus their points).
 * The arithmetic is done in the order the Python reference does it, so the value is
 * the same double. */

typedef struct {
    size_t cap, used; /* cap: a power of two */
    uint64_t *keys;   /* 0: empty; else the packed leave | 1 << 63 */
    double *vals;
} LeaveCache;

#define CACHE_TAG (1ull << 63)
#define CACHE_NAME "meeple.leave_cache"
#define MAX_RACK 12 /* base-28 keys of up to 12 tiles fit in 63 bits */

static void cache_free(PyObject *capsule) {
    LeaveCache *c = PyCapsule_GetPointer(capsule, CACHE_NAME);
    if (!c) return;
    free(c->keys);
    free(c->vals);
    free(c);
}

static PyObject *leave_cache(PyObject *self, PyObject *noargs) {
    LeaveCache *c = calloc(1, sizeof *c);
    if (!c) return PyErr_NoMemory();
    c->cap = 1024;
    c->keys = calloc(c->cap, sizeof *c->keys);
    c->vals = calloc(c->cap, sizeof *c->vals);
    if (!c->keys || !c->vals) {
        free(c->keys);
        free(c->vals);
        free(c);
        return PyErr_NoMemory();
    }
    PyObject *cap = PyCapsule_New(c, CACHE_NAME, cache_free);
    if (!cap) {
        free(c->keys);
        free(c->vals);
        free(c);
    }
    return cap;
}

static inline size_t cache_slot(const LeaveCache *c, uint64_t key) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 40) & (c->cap - 1);
    while (c->keys[i] && c->keys[i] != key) i = (i + 1) & (c->cap - 1);
    return i;
}

static int cache_grow(LeaveCache *c) {
    LeaveCache n = {c->cap * 2, c->used, NULL, NULL};
    n.keys = calloc(n.cap, sizeof *n.keys);
    n.vals = calloc(n.cap, sizeof *n.vals);
    if (!n.keys || !n.vals) {
        free(n.keys);
        free(n.vals);
        return -1;
    }
    for (size_t i = 0; i < c->cap; i++)
        if (c->keys[i]) {
            size_t j = cache_slot(&n, c->keys[i]);
            n.keys[j] = c->keys[i];
            n.vals[j] = c->vals[i];
        }
    free(c->keys);
    free(c->vals);
    *c = n;
    return 0;
}

/* The value of the leave with counts[27] (26 = blank), in leave-table order (A-Z, ?).
 * Returns -1 with an exception set when `get` fails. */
static int leave_value(LeaveCache *c, PyObject *get, const int *counts, double *out) {
    char text[MAX_RACK + 1];
    int n = 0;
    uint64_t key = 0;
    for (int k = 0; k < 27; k++)
        for (int j = 0; j < counts[k]; j++) {
            if (n == MAX_RACK) {
                PyErr_SetString(PyExc_ValueError, "rack too long");
                return -1;
            }
            text[n++] = k == 26 ? '?' : (char)('A' + k);
            key = key * 28 + (uint64_t)(k + 1);
        }
    key |= CACHE_TAG;
    size_t i = cache_slot(c, key);
    if (c->keys[i]) {
        *out = c->vals[i];
        return 0;
    }
    PyObject *s = PyUnicode_FromStringAndSize(text, n);
    if (!s) return -1;
    PyObject *zero = PyFloat_FromDouble(0.0);
    PyObject *r = zero ? PyObject_CallFunctionObjArgs(get, s, zero, NULL) : NULL;
    Py_DECREF(s);
    Py_XDECREF(zero);
    if (!r) return -1;
    double v = PyFloat_AsDouble(r);
    Py_DECREF(r);
    if (v == -1.0 && PyErr_Occurred()) return -1;
    if ((c->used + 1) * 2 > c->cap) {
        if (cache_grow(c) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        i = cache_slot(c, key);
    }
    c->keys[i] = key;
    c->vals[i] = v;
    c->used++;
    *out = v;
    return 0;
}

typedef struct {
    const uint32_t *g;
    uint32_t root;
    int size;
    const uint8_t *lm, *wm;
    int values[26], blank_value;
    int bingo_tiles, bingo_bonus;
    LeaveCache *cache;
    PyObject *get;
} LineCtx;

static int rack_points(const LineCtx *L, const int *counts) {
    int t = 0;
    for (int k = 0; k < 26; k++) t += counts[k] * L->values[k];
    return t + counts[26] * L->blank_value;
}

static int rack_len(const int *counts) {
    int t = 0;
    for (int k = 0; k < 27; k++) t += counts[k];
    return t;
}

/* The best play by equity for `counts` on `board` into *best; 0 when there is none,
 * 1 when found, -1 on an error. `endgame_out` >= 0: EndgameLeave(endgame_out) values. */
static int best_play(const LineCtx *L, const char *board, const int *counts, int endgame_out,
                     Record *best) {
    int kinds[27], kc[27], nk = 0;
    for (int k = 0; k < 27; k++)
        if (counts[k]) {
            kinds[nk] = k;
            kc[nk++] = counts[k];
        }
    double table[256];
    int strides[27] = {0}, size = 1, sub[27];
    for (int j = 0; j < nk; j++) {
        strides[kinds[j]] = size;
        size *= kc[j] + 1;
    }
    if (size > 256) {
        PyErr_SetString(PyExc_ValueError, "rack too long for a line");
        return -1;
    }
    for (int index = 0; index < size; index++) {
        memset(sub, 0, sizeof sub);
        int kept = 0;
        for (int j = 0; j < nk; j++) {
            sub[kinds[j]] = (index / strides[kinds[j]]) % (kc[j] + 1);
            kept += sub[kinds[j]];
        }
        if (endgame_out >= 0)
            table[index] = kept ? -(double)rack_points(L, sub) : 2.0 * endgame_out;
        else if (leave_value(L->cache, L->get, sub, &table[index]) < 0)
            return -1;
    }
    Gen gen;
    memset(&gen, 0, sizeof gen);
    Gen *G = &gen;
    G->g = L->g;
    G->root = L->root;
    G->size = L->size;
    G->board = board;
    for (int k = 0; k < 26; k++) {
        G->rack[k] = counts[k];
        G->values[k] = L->values[k];
        G->strides[k] = strides[k];
    }
    G->strides[26] = strides[26];
    G->blanks = counts[26];
    G->leave = table;
    G->leave_idx = size - 1;
    G->bingo_tiles = L->bingo_tiles;
    G->bingo_bonus = L->bingo_bonus;
    G->mode = MODE_TOP_EQUITY;
    G->top = 1;
    G->out = best;
    G->cap = 1;
    run(G, L->lm, L->wm);
    return G->used > 0;
}

/* Put a play's new tiles on `board` and take them off `counts`; returns how many. */
static int apply_play(const LineCtx *L, char *board, int *counts, const Record *r) {
    int n = 0;
    for (int i = 0; i < r->len; i++) {
        if (!(r->newmask >> i & 1)) continue;
        int x = r->down ? r->x : r->x + i, y = r->down ? r->y + i : r->y;
        char c = r->word[i];
        board[y * L->size + x] = c;
        if (c >= 'a' && c <= 'z')
            counts[26]--;
        else
            counts[c - 'A']--;
        n++;
    }
    return n;
}

/* Move up to n tiles from the end of the bag (bag[0..*left)) onto counts. */
static void draw_tiles(const char *bag, Py_ssize_t *left, int *counts, int n) {
    while (n-- > 0 && *left > 0) {
        char c = bag[--*left];
        counts[c == '?' ? 26 : c - 'A']++;
    }
}

static int parse_tiles(PyObject *o, int *counts, const char *what) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) return -1;
    memset(counts, 0, 27 * sizeof(int));
    if (n > MAX_RACK) {
        PyErr_Format(PyExc_ValueError, "%s: more than %d tiles", what, MAX_RACK);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '?')
            counts[26]++;
        else if (c >= 'A' && c <= 'Z')
            counts[c - 'A']++;
        else {
            PyErr_Format(PyExc_ValueError, "%s: not a tile: %R", what, o);
            return -1;
        }
    }
    return 0;
}

static PyObject *sim_line(PyObject *self, PyObject *args) {
    PyObject *flat_obj, *board_obj, *lm_obj, *wm_obj, *values_obj, *cache_obj, *get, *mine_obj,
        *theirs_obj, *bag_obj;
    unsigned long root;
    int size, bingo_tiles, bingo_bonus, endgame_plies, blank_value;
    double value;
    if (!PyArg_ParseTuple(args, "OkOiOOOiiOOdUUUpi", &flat_obj, &root, &board_obj, &size, &lm_obj,
                          &wm_obj, &values_obj, &bingo_tiles, &bingo_bonus, &cache_obj, &get,
                          &value, &mine_obj, &theirs_obj, &bag_obj, &endgame_plies,
                          &blank_value))
        return NULL;
    if (size < 1 || size > MAX_SIZE) return PyErr_Format(PyExc_ValueError, "bad board size");
    LeaveCache *cache = PyCapsule_GetPointer(cache_obj, CACHE_NAME);
    if (!cache) return NULL;
    int mine[27], theirs[27];
    if (parse_tiles(mine_obj, mine, "mine") < 0 || parse_tiles(theirs_obj, theirs, "theirs") < 0)
        return NULL;
    Py_ssize_t left;
    const char *bag = PyUnicode_AsUTF8AndSize(bag_obj, &left);
    if (!bag) return NULL;
    for (Py_ssize_t i = 0; i < left; i++)
        if (bag[i] != '?' && (bag[i] < 'A' || bag[i] > 'Z'))
            return PyErr_Format(PyExc_ValueError, "bag: not a tile");
    Inputs in;
    PyObject *result = NULL;
    Py_ssize_t cells = (Py_ssize_t)size * size;
    if (get_inputs(&in, flat_obj, board_obj, lm_obj, wm_obj, values_obj, cells) < 0) goto done;
    if ((Py_ssize_t)root >= in.flat.len / 4) {
        PyErr_SetString(PyExc_ValueError, "root out of range");
        goto done;
    }
    LineCtx L = {in.flat.buf, (uint32_t)root, size, in.lm.buf, in.wm.buf, {0}, blank_value,
                 bingo_tiles, bingo_bonus, cache, get};
    for (int k = 0; k < 26; k++) L.values[k] = ((const uint8_t *)in.values.buf)[k];
    char board[MAX_SIZE * MAX_SIZE];
    memcpy(board, in.board.buf, (size_t)cells);
    Record r;
    /* the opponent's reply */
    int end = endgame_plies && left == 0;
    int found = best_play(&L, board, theirs, end ? rack_points(&L, mine) : -1, &r);
    if (found < 0) goto done;
    if (found) {
        value -= r.score;
        int n = apply_play(&L, board, theirs, &r);
        if (end && rack_len(theirs) == 0) { /* they went out: our rack counts twice */
            result = Py_BuildValue("diO", value - 2 * rack_points(&L, mine), 0, Py_True);
            goto done;
        }
        draw_tiles(bag, &left, theirs, n);
    }
    /* our answer */
    end = endgame_plies && left == 0;
    found = best_play(&L, board, mine, end ? rack_points(&L, theirs) : -1, &r);
    if (found < 0) goto done;
    if (found) {
        value += r.score;
        apply_play(&L, board, mine, &r);
        if (end && rack_len(mine) == 0) { /* we went out */
            result = Py_BuildValue("diO", value + 2 * rack_points(&L, theirs), 0, Py_True);
            goto done;
        }
    }
    int unseen_after = (int)left + rack_len(mine);
    if (end) {
        value = value + rack_points(&L, theirs) - rack_points(&L, mine);
    } else {
        double leave;
        if (leave_value(cache, get, mine, &leave) < 0) goto done;
        value = value + leave;
    }
    result = Py_BuildValue("diO", value, unseen_after, Py_False);
done:
    release_inputs(&in);
    return result;
}

static PyMethodDef methods[] = {
    {"check_graph", check_graph, METH_VARARGS,
     "check_graph(flat, root) -> bool: the graph is safe for generate()."},
    {"generate", generate, METH_VARARGS,
     "generate(...): count or list plays; see the comment at the top of _movegen.c."},
    {"leave_cache", leave_cache, METH_NOARGS,
     "leave_cache() -> capsule: an empty cache of leave values for sim_line()."},
    {"sim_line", sim_line, METH_VARARGS,
     "sim_line(...) -> (value, unseen_after, final): one simulated line; see _movegen.c."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_movegen", "The compiled Scrabble move generator.", -1, methods,
};

PyMODINIT_FUNC PyInit__movegen(void) {
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddIntConstant(m, "RECORD_SIZE", (long)sizeof(Record)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
