/*
 * meeple.ai._santorini_core: the compiled Santorini search (two players, gods or none).
 *
 * The pure-Python twin (santorini_twin.py) is the reference for the rules: this file
 * generates the same turns in the same order (tests/ai/test_santorini_core.py checks
 * moves, keys and results on random positions and god pairs, hypothesis choosing them),
 * and ports the evaluation of santorini_eval.py (evaluate_mortal, evaluate_gods) so that
 * at a fixed depth the compiled and the Python search find the same value.
 *
 * A position: per cell a code (0-3 a level, 4 a complete tower, 5-7 a dome on level
 * 0-2), four workers (seat 0's two, seat 1's two), the side to move, the winner (-1 while
 * the game goes on), the "moved up" bits (Athena) and a Zobrist key; 25-bit bitboards of
 * each code and of the workers are kept beside the cells. The Zobrist keys are the
 * twin's, handed over by set_keys().
 *
 * The search: negamax principal-variation search, iterative deepening with aspiration
 * windows at the root, a transposition table (always replace), two killers per ply and a
 * history table; a side to move that can win at once has won; at the horizon a side
 * facing an opponent's win gets up to MAX_EXT more plies to find its block (the Python
 * search's rule). That is the exact search (selective 0) the tests compare with Python;
 * the players add the SEL_* features (issue 36): late move reductions, reverse futility,
 * null move, threats resolved up to MAX_QEXT extensions, late move pruning at the
 * frontier. Moves are applied by make/unmake with an incremental key. The clock is
 * the caller's (an injected callable), read every CLOCK_EVERY nodes with the GIL taken
 * back; the search itself runs without the GIL. When the caller's clock is
 * CLOCK_MONOTONIC (time.monotonic, as the server's bots pass), the core reads it
 * itself and keeps the finished iterations in a C array: from the root's moves to the
 * answer it never takes the GIL, so a thinking bot does not hold up the event loop.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WIN 1000000
#define MATE (WIN - 1000)
#define MAX_EXT 2
#define MAX_PLY 96
#define MAX_STEPS 30
#define MAX_GEN 4096
#define STACK_MOVES (1 << 16)
#define CLOCK_EVERY 256
#ifndef LMR_AFTER
#define LMR_AFTER 4
#endif
/* The selective search (issue 36), each a bit of `selective`; 0 is the exact
 * full-width search the Python search's values are compared with. */
#define SEL_LMR 1   /* late move reductions at every node, re-searched when they beat alpha */
#define SEL_RFP 2   /* reverse futility: a quiet node far above beta near the horizon */
#define SEL_NMP 4   /* null move: passing still beats beta at a reduced depth */
#define SEL_QS 8    /* threats resolved: up to MAX_QEXT extensions, and one per threat inside */
#define SEL_LMP 16  /* late quiet moves at the frontier left out */
#define SEL_IIR 32  /* internal iterative reduction: a node without a table move, a ply less */
#define SEL_HIST 64 /* history by (from, to, build) with a malus for the quiet moves that did not cut */
#define SEL_HP 128  /* history pruning: quiet moves of a bad history near the horizon left out */
#define SEL_RFPD 256 /* reverse futility up to RFPD_DEPTH plies from the horizon, less margin when improving */
#define SEL_FP 512  /* futility: quiet moves 1-2 plies from the horizon far below alpha left out */
#define SEL_LMRI 1024 /* late move reductions one ply more where the side is not improving */
#define SEL_BLK 2048 /* facing a win: only the turns that stop it are searched */
#define SEL_ALL                                                                              \
    (SEL_LMR | SEL_RFP | SEL_NMP | SEL_QS | SEL_LMP | SEL_IIR | SEL_HIST | SEL_HP | SEL_RFPD | \
     SEL_FP | SEL_LMRI | SEL_BLK)
#ifndef FP_MARGIN
#define FP_MARGIN 150
#endif
#ifndef RFPD_DEPTH
#define RFPD_DEPTH 8
#endif
#define NO_EVAL (-2 * WIN)
#define HIST2 (26 * 26 * 26)
#define HIST_MAX 16384 /* the history's bound: bonus and malus are pulled towards it */
#ifndef HP_MARGIN
#define HP_MARGIN 2000 /* SEL_HP: history below -HP_MARGIN * depth is pruned */
#endif
#define MAX_QEXT 16
#ifndef RFP_MARGIN
#define RFP_MARGIN 120
#endif
#ifndef LMP_COUNT
#define LMP_COUNT 10
#endif
#define EXACT 1
#define LOWER 2
#define UPPER 3
#define BUILD_FLAG (1 << 15)

enum {
    G_NONE, G_APOLLO, G_ARTEMIS, G_ATHENA, G_ATLAS, G_CHRONUS, G_DEMETER, G_HADES,
    G_HEPHAESTUS, G_HERA, G_HESTIA, G_HYPNUS, G_LIMUS, G_MINOTAUR, G_PAN, G_PROMETHEUS,
    G_TRITON, G_ZEUS, G_COUNT
};
static const char *GOD_NAMES[G_COUNT] = {
    "", "Apollo", "Artemis", "Athena", "Atlas", "Chronus", "Demeter", "Hades",
    "Hephaestus", "Hera", "Hestia", "Hypnus", "Limus", "Minotaur", "Pan", "Prometheus",
    "Triton", "Zeus",
};

/* ------------------------------------------------------------------ board tables */

static int NB[25][8];
static int NBN[25];
static uint32_t NBM[25];
static int BEHIND[25][25];
static uint32_t EDGE;
static int CENTRE[25];
static int CLS[25]; /* the cell's class under the board's symmetry (santorini_eval._CLASS) */

static uint64_t Z_CODE[25][8];
static uint64_t Z_WORKER[4][25];
static uint64_t Z_TURN[2];
static uint64_t Z_ATHENA;
static int keys_set = 0;

static void init_tables(void) {
    for (int c = 0; c < 25; c++) {
        int r = c / 5, k = c % 5, n = 0;
        NBM[c] = 0;
        for (int dr = -1; dr <= 1; dr++)
            for (int dk = -1; dk <= 1; dk++) {
                if (!dr && !dk) continue;
                int r2 = r + dr, k2 = k + dk;
                if (r2 < 0 || r2 > 4 || k2 < 0 || k2 > 4) continue;
                NB[c][n++] = r2 * 5 + k2;
                NBM[c] |= 1u << (r2 * 5 + k2);
            }
        NBN[c] = n;
        int dr = abs(r - 2), dk = abs(k - 2);
        CENTRE[c] = 2 - (dr > dk ? dr : dk);
        {
            int a = r < 4 - r ? r : 4 - r, b = k < 4 - k ? k : 4 - k;
            if (a > b) { int t = a; a = b; b = t; }
            /* (0,0) corner, (0,1) edge1, (0,2) edge2, (1,1) diag, (1,2) orth, (2,2) mid */
            CLS[c] = a == 0 ? b : a == 1 ? 2 + b : 5;
        }
        if (r == 0 || r == 4 || k == 0 || k == 4) EDGE |= 1u << c;
    }
    for (int s = 0; s < 25; s++)
        for (int d = 0; d < 25; d++) {
            BEHIND[s][d] = -1;
            if (!(NBM[s] >> d & 1)) continue;
            int r3 = 2 * (d / 5) - s / 5, k3 = 2 * (d % 5) - s % 5;
            if (r3 >= 0 && r3 < 5 && k3 >= 0 && k3 < 5) BEHIND[s][d] = r3 * 5 + k3;
        }
}

/* --------------------------------------------------------------------- positions */

/* The network evaluation (santorini_net.py, its Python twin): NET_IN inputs a side, NET_H
 * hidden units a side, clipped ReLU at NET_QA, one output at NET_QA * NET_QB a unit. */
#define NET_IN 325
#define NET_H 32
#define NET_QA 256
#define NET_QB 64

typedef struct {
    PyObject_HEAD
    int16_t w1[NET_IN][NET_H];
    int16_t b1[NET_H];
    int16_t w2[2 * NET_H];
    int32_t b2;
    int32_t scale;
    int residual; /* the value is the weights' evaluation plus the network's */
} NetObject;

typedef struct {
    uint8_t h[25];
    uint8_t wk[4];
    uint8_t turn;
    int8_t winner;
    uint8_t mu;
    uint32_t lv[8];  /* cells of each code */
    uint32_t occ;    /* cells with a worker */
    uint64_t key;
    const NetObject *net;     /* NULL: no accumulators kept */
    int32_t acc[2][NET_H];    /* each side's accumulator (net_refresh, updated by make) */
} Pos;

typedef struct {
    uint8_t nw, nb;
    uint8_t wi[2], wfrom[2], wto[2];
    uint8_t bc[2], bold[2], bnew[2];
    int8_t won;
    uint8_t mu_new, mu_old;
    uint8_t pruned; /* left out by late move or history pruning (searched after all if the rest lose) */
    uint16_t gen; /* its place in the generation order (the root's routes) */
    uint32_t id;
    int32_t score;
    uint64_t key_new, key_old;
} Move;

typedef struct {
    uint8_t n;
    uint16_t steps[MAX_STEPS];
} Route;

static inline int popc(uint32_t x) { return __builtin_popcount(x); }

static void pos_bitboards(Pos *p) {
    memset(p->lv, 0, sizeof p->lv);
    p->occ = 0;
    for (int c = 0; c < 25; c++) p->lv[p->h[c]] |= 1u << c;
    for (int w = 0; w < 4; w++) p->occ |= 1u << p->wk[w];
}

static inline int worker_at(const uint8_t *wk, int d) {
    for (int v = 0; v < 4; v++)
        if (wk[v] == d) return v;
    return -1;
}

/* ------------------------------------------------------------- the network */

static inline void acc_row(int32_t *acc, const int16_t *row, int sign) {
    if (sign > 0)
        for (int i = 0; i < NET_H; i++) acc[i] += row[i];
    else
        for (int i = 0; i < NET_H; i++) acc[i] -= row[i];
}

static inline int net_worker_input(int v, int c, int code, int seat) {
    return ((v >> 1) == seat ? 125 : 225) + c * 4 + (code > 3 ? 3 : code);
}

/* Both accumulators from scratch (santorini_net.accumulator). */
static void net_refresh(Pos *p) {
    const NetObject *n = p->net;
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < NET_H; i++) p->acc[s][i] = n->b1[i];
        for (int c = 0; c < 25; c++) acc_row(p->acc[s], n->w1[c * 5 + (p->h[c] > 4 ? 4 : p->h[c])], 1);
        for (int v = 0; v < 4; v++)
            acc_row(p->acc[s], n->w1[net_worker_input(v, p->wk[v], p->h[p->wk[v]], s)], 1);
    }
}

/* A worker's inputs out of (sign -1) or into (+1) both accumulators. */
static inline void net_worker(Pos *p, int v, int c, int code, int sign) {
    const NetObject *n = p->net;
    acc_row(p->acc[0], n->w1[net_worker_input(v, c, code, 0)], sign);
    acc_row(p->acc[1], n->w1[net_worker_input(v, c, code, 1)], sign);
}

/* A cell's height input changed from code a to b, in both accumulators. */
static inline void net_cell(Pos *p, int c, int a, int b) {
    if (a > 4) a = 4;
    if (b > 4) b = 4;
    if (a == b) return;
    const int16_t *ra = p->net->w1[c * 5 + a], *rb = p->net->w1[c * 5 + b];
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < NET_H; i++) p->acc[s][i] += rb[i] - ra[i];
}

/* The value for the side to move (santorini_net.evaluate_net). */
static int net_eval(const Pos *p) {
    const NetObject *n = p->net;
    int64_t t = n->b2;
    const int32_t *us = p->acc[p->turn], *them = p->acc[p->turn ^ 1];
    for (int i = 0; i < NET_H; i++) {
        int32_t a = us[i] < 0 ? 0 : us[i] > NET_QA ? NET_QA : us[i];
        int32_t b = them[i] < 0 ? 0 : them[i] > NET_QA ? NET_QA : them[i];
        t += (int64_t)a * n->w2[i] + (int64_t)b * n->w2[NET_H + i];
    }
    int64_t num = t * n->scale, den = (int64_t)NET_QA * NET_QB;
    int64_t q = num / den;
    if ((num % den != 0) && ((num < 0) != (den < 0))) q--; /* floor, as Python's // */
    return (int)q;
}

/* The workers a turn moves (Apollo's and Minotaur's forced ones too) or builds under
 * (Zeus), as (worker, cell, code) before a make or an unmake. */
typedef struct { int n; int v[4], c[4], code[4]; } Touched;

static void net_before(const Pos *p, const Move *m, Touched *t) {
    t->n = 0;
    for (int v = 0; v < 4; v++) {
        int hit = 0;
        for (int j = 0; j < m->nw; j++)
            if (m->wi[j] == v) hit = 1;
        int here = p->wk[v];
        for (int j = 0; j < m->nb; j++)
            if (m->bc[j] == here) hit = 1;
        if (hit) {
            t->v[t->n] = v;
            t->c[t->n] = here;
            t->code[t->n] = p->h[here];
            t->n++;
        }
    }
}

static void net_after(Pos *p, const Touched *t) {
    for (int k = 0; k < t->n; k++) {
        int v = t->v[k], c = p->wk[v], code = p->h[c];
        int a = t->code[k] > 3 ? 3 : t->code[k], b = code > 3 ? 3 : code;
        if (c == t->c[k] && a == b) continue;
        net_worker(p, v, t->c[k], t->code[k], -1);
        net_worker(p, v, c, code, 1);
    }
}

static void make(Pos *p, const Move *m) {
    Touched t;
    if (p->net) {
        net_before(p, m, &t);
        for (int j = 0; j < m->nb; j++) net_cell(p, m->bc[j], m->bold[j], m->bnew[j]);
    }
    for (int j = 0; j < m->nb; j++) {
        int c = m->bc[j];
        p->lv[m->bold[j]] ^= 1u << c;
        p->lv[m->bnew[j]] ^= 1u << c;
        p->h[c] = m->bnew[j];
    }
    for (int j = 0; j < m->nw; j++) p->occ ^= 1u << m->wfrom[j];
    for (int j = 0; j < m->nw; j++) {
        p->wk[m->wi[j]] = m->wto[j];
        p->occ ^= 1u << m->wto[j];
    }
    p->mu = m->mu_new;
    p->key = m->key_new;
    p->winner = m->won;
    if (m->won < 0) p->turn ^= 1;
    if (p->net) net_after(p, &t);
}

static void unmake(Pos *p, const Move *m) {
    Touched t;
    if (p->net) {
        net_before(p, m, &t);
        for (int j = m->nb - 1; j >= 0; j--) net_cell(p, m->bc[j], m->bnew[j], m->bold[j]);
    }
    if (m->won < 0) p->turn ^= 1;
    p->winner = -1;
    p->key = m->key_old;
    p->mu = m->mu_old;
    for (int j = 0; j < m->nw; j++) p->occ ^= 1u << m->wto[j];
    for (int j = 0; j < m->nw; j++) {
        p->wk[m->wi[j]] = m->wfrom[j];
        p->occ ^= 1u << m->wfrom[j];
    }
    for (int j = m->nb - 1; j >= 0; j--) {
        int c = m->bc[j];
        p->lv[m->bnew[j]] ^= 1u << c;
        p->lv[m->bold[j]] ^= 1u << c;
        p->h[c] = m->bold[j];
    }
    if (p->net) net_after(p, &t);
}

/* ---------------------------------------------------------------- move generation */

typedef struct {
    /* the position at the turn's start, and the scratch of the turn being built */
    const Pos *p0;
    int gods[2];
    int me, opp, god, ogod;
    int no_up, no_down, hera, is_limus, chronus, pan, force, atlas, zeus, second, athena;
    uint8_t h[25];
    uint8_t wk[4];
    int towers; /* complete towers on h */
    uint16_t steps[MAX_STEPS];
    int nsteps;
    uint8_t bc[2], bold[2], bnew[2];
    int nb;
    Move *out;
    Route *routes; /* NULL: routes not recorded */
    int n, cap, full;
} Gen;

typedef struct { int d, v, to, up, win; } Step;

static int moves_from(Gen *g, int i, int not_to, int not_up, Step *out) {
    const uint8_t *h = g->h;
    const uint8_t *wk = g->wk;
    int src = wk[i], hs = h[src];
    int top = (g->no_up || not_up) ? hs : hs + 1;
    int n = 0;
    for (int j = 0; j < NBN[src]; j++) {
        int d = NB[src][j], hd = h[d];
        if (hd > top || hd >= 4 || d == not_to || (g->no_down && hd < hs)) continue;
        int v = worker_at(wk, d), to = -1;
        if (v >= 0) {
            if ((v >> 1) == g->me || !g->force) continue;
            if (g->force == 1) {
                to = src;
            } else {
                to = BEHIND[src][d];
                if (to < 0 || h[to] >= 4 || worker_at(wk, to) >= 0) continue;
            }
        }
        int win = (hd == 3 && hs < 3) || (g->pan && hs - hd >= 2);
        if (win && g->hera && (EDGE >> d & 1)) win = 0;
        out[n].d = d;
        out[n].v = v;
        out[n].to = to;
        out[n].up = hd > hs;
        out[n].win = win;
        n++;
    }
    return n;
}

typedef struct { int c, level, code; } BuildOpt;

static int builds_at(Gen *g, int at, BuildOpt *out) {
    const uint8_t *h = g->h;
    const uint8_t *wk = g->wk;
    uint32_t limus = 0, occ = 0;
    for (int w = 0; w < 4; w++) occ |= 1u << wk[w];
    if (g->is_limus) limus = NBM[wk[2 * g->opp]] | NBM[wk[2 * g->opp + 1]];
    int n = 0;
    for (int j = 0; j < NBN[at]; j++) {
        int c = NB[at][j], hc = h[c];
        if (hc >= 4 || (occ >> c & 1)) continue;
        if (hc == 3) {
            out[n].c = c; out[n].level = 4; out[n].code = 4; n++;
            continue;
        }
        if (limus >> c & 1) continue;
        out[n].c = c; out[n].level = hc + 1; out[n].code = hc + 1; n++;
        if (g->atlas) {
            out[n].c = c; out[n].level = 4; out[n].code = 5 + hc; n++;
        }
    }
    if (g->zeus) {
        int hc = h[at];
        if (hc < 3 && !(limus >> at & 1)) {
            out[n].c = at; out[n].level = hc + 1; out[n].code = hc + 1; n++;
        }
    }
    return n;
}

static int board_win(Gen *g) {
    if (g->chronus && g->towers >= 5) return g->chronus == 1 ? g->me : g->opp;
    return -1;
}

static inline void gen_build(Gen *g, int at, const BuildOpt *b) {
    g->bc[g->nb] = (uint8_t)b->c;
    g->bold[g->nb] = g->h[b->c];
    g->bnew[g->nb] = (uint8_t)b->code;
    g->nb++;
    if (g->h[b->c] == 4) g->towers--;
    g->h[b->c] = (uint8_t)b->code;
    if (b->code == 4) g->towers++;
    g->steps[g->nsteps++] = (uint16_t)(BUILD_FLAG | b->level << 10 | at << 5 | b->c);
}

static inline void ungen_build(Gen *g) {
    g->nb--;
    g->nsteps--;
    int c = g->bc[g->nb];
    if (g->h[c] == 4) g->towers--;
    g->h[c] = g->bold[g->nb];
    if (g->h[c] == 4) g->towers++;
}

/* The end of a turn: a Move from the turn's start to the scratch position. */
static void end(Gen *g, int up, int won) {
    if (g->n >= g->cap) {
        g->full = 1;
        return;
    }
    const Pos *p0 = g->p0;
    Move *m = &g->out[g->n++];
    uint64_t k = p0->key;
    m->nw = 0;
    m->id = 0;
    for (int w = 0; w < 4; w++)
        if (g->wk[w] != p0->wk[w]) {
            int j = m->nw++;
            m->wi[j] = (uint8_t)w;
            m->wfrom[j] = p0->wk[w];
            m->wto[j] = g->wk[w];
            k ^= Z_WORKER[w][p0->wk[w]] ^ Z_WORKER[w][g->wk[w]];
            if ((w >> 1) == g->me) m->id = (uint32_t)(w & 1) << 1 | 1u | (uint32_t)g->wk[w] << 2;
        }
    m->nb = (uint8_t)g->nb;
    for (int j = 0; j < g->nb; j++) {
        m->bc[j] = g->bc[j];
        m->bold[j] = g->bold[j];
        m->bnew[j] = g->bnew[j];
        k ^= Z_CODE[g->bc[j]][g->bold[j]] ^ Z_CODE[g->bc[j]][g->bnew[j]];
        m->id |= ((uint32_t)g->bc[j] << 3 | g->bnew[j]) << (7 + 8 * j);
    }
    int mu = p0->mu;
    if (won < 0) {
        mu = up ? (mu | 1 << g->me) : (mu & ~(1 << g->me));
        k ^= Z_TURN[0] ^ Z_TURN[1];
        if (g->athena == g->me && mu != p0->mu) k ^= Z_ATHENA;
    }
    m->won = (int8_t)won;
    m->mu_old = p0->mu;
    m->mu_new = (uint8_t)mu;
    m->key_old = p0->key;
    m->key_new = k;
    m->score = 0;
    m->gen = (uint16_t)(g->n - 1);
    if (g->routes != NULL) {
        g->routes[g->n - 1].n = (uint8_t)g->nsteps;
        memcpy(g->routes[g->n - 1].steps, g->steps, sizeof(uint16_t) * g->nsteps);
    }
}

static void build_phase(Gen *g, int i, int up) {
    int at = g->wk[i];
    BuildOpt bs[20], bs2[20];
    int nbs = builds_at(g, at, bs);
    for (int j = 0; j < nbs; j++) {
        gen_build(g, at, &bs[j]);
        int won = board_win(g);
        if (won != -1) {
            end(g, up, won);
            ungen_build(g);
            continue;
        }
        end(g, up, -1);
        if (g->second && !(g->second == 3 && bs[j].level >= 3)) {
            int nbs2 = builds_at(g, at, bs2);
            for (int j2 = 0; j2 < nbs2; j2++) {
                const BuildOpt *b2 = &bs2[j2];
                if (g->second == 1 && b2->c == bs[j].c) continue;
                if (g->second == 2 && (EDGE >> b2->c & 1)) continue;
                if (g->second == 3 && (b2->c != bs[j].c || b2->level == 4)) continue;
                gen_build(g, at, b2);
                end(g, up, board_win(g));
                ungen_build(g);
            }
        }
        ungen_build(g);
    }
}

static inline void step_to(Gen *g, int i, const Step *s) {
    int src = g->wk[i];
    if (s->v >= 0) g->wk[s->v] = (uint8_t)s->to;
    g->wk[i] = (uint8_t)s->d;
    g->steps[g->nsteps++] = (uint16_t)(src << 5 | s->d);
}

static inline void unstep(Gen *g, int i, int src, const Step *s) {
    g->wk[i] = (uint8_t)src;
    if (s->v >= 0) g->wk[s->v] = (uint8_t)s->d;
    g->nsteps--;
}

typedef struct {
    uint8_t at;
    uint8_t up;
    uint8_t nsteps;
    uint16_t steps[MAX_STEPS];
} TritonEntry;

static void triton(Gen *g, int i) {
    int me = g->me;
    int src = g->wk[i];
    int base = g->nsteps;
    uint32_t seen = 0;
    TritonEntry queue[26];
    int nq = 0;
    Step ms[8];
    int n = moves_from(g, i, -1, 0, ms);
    for (int j = 0; j < n; j++) {
        step_to(g, i, &ms[j]);
        if (ms[j].win) {
            end(g, ms[j].up, me);
        } else if (!(seen >> ms[j].d & 1)) {
            seen |= 1u << ms[j].d;
            TritonEntry *e = &queue[nq++];
            e->at = (uint8_t)ms[j].d;
            e->up = (uint8_t)ms[j].up;
            e->nsteps = (uint8_t)(g->nsteps - base);
            memcpy(e->steps, g->steps + base, sizeof(uint16_t) * e->nsteps);
        }
        unstep(g, i, src, &ms[j]);
    }
    for (int q = 0; q < nq; q++) {
        TritonEntry e = queue[q];
        g->wk[i] = e.at;
        memcpy(g->steps + base, e.steps, sizeof(uint16_t) * e.nsteps);
        g->nsteps = base + e.nsteps;
        if (EDGE >> e.at & 1) {
            n = moves_from(g, i, -1, 0, ms);
            for (int j = 0; j < n; j++) {
                if (g->nsteps >= MAX_STEPS - 2) break;
                step_to(g, i, &ms[j]);
                int up2 = e.up || ms[j].up;
                if (ms[j].win) {
                    end(g, up2, me);
                } else if (!(seen >> ms[j].d & 1) && nq < 26) {
                    seen |= 1u << ms[j].d;
                    TritonEntry *f = &queue[nq++];
                    f->at = (uint8_t)ms[j].d;
                    f->up = (uint8_t)up2;
                    f->nsteps = (uint8_t)(g->nsteps - base);
                    memcpy(f->steps, g->steps + base, sizeof(uint16_t) * f->nsteps);
                }
                unstep(g, i, e.at, &ms[j]);
            }
        }
        build_phase(g, i, e.up);
    }
    g->wk[i] = (uint8_t)src;
    g->nsteps = base;
}

/* Every way for the side to move to complete its turn, in the twin's order (with the
 * duplicates the twin drops: a caller that needs them distinct dedups). */
static int generate(const Pos *p, const int gods[2], Move *out, int cap, Route *routes, int *full) {
    Gen G;
    Gen *g = &G;
    g->p0 = p;
    g->gods[0] = gods[0];
    g->gods[1] = gods[1];
    int me = p->turn, opp = 1 - me;
    g->me = me;
    g->opp = opp;
    int god = gods[me], ogod = gods[opp];
    g->god = god;
    g->ogod = ogod;
    g->no_up = ogod == G_ATHENA && (p->mu >> opp & 1);
    g->no_down = ogod == G_HADES;
    g->hera = ogod == G_HERA;
    g->is_limus = ogod == G_LIMUS;
    g->chronus = god == G_CHRONUS ? 1 : ogod == G_CHRONUS ? 2 : 0;
    g->pan = god == G_PAN;
    g->force = god == G_APOLLO ? 1 : god == G_MINOTAUR ? 2 : 0;
    g->atlas = god == G_ATLAS;
    g->zeus = god == G_ZEUS;
    g->second = god == G_DEMETER ? 1 : god == G_HESTIA ? 2 : god == G_HEPHAESTUS ? 3 : 0;
    g->athena = gods[0] == G_ATHENA ? 0 : gods[1] == G_ATHENA ? 1 : -1;
    memcpy(g->h, p->h, 25);
    memcpy(g->wk, p->wk, 4);
    g->towers = popc(p->lv[4]);
    g->nsteps = 0;
    g->nb = 0;
    g->out = out;
    g->n = 0;
    g->cap = cap;
    g->routes = routes;
    g->full = 0;
    if (p->winner >= 0) return 0;
    Step ms[8], ms2[8];
    for (int i = 2 * me; i < 2 * me + 2; i++) {
        int src = p->wk[i];
        if (ogod == G_HYPNUS && p->h[src] > p->h[p->wk[i ^ 1]]) continue;
        /* the starts: no build first, then Prometheus' builds before the move */
        BuildOpt pre[20];
        int npre = 0, nstarts = 1;
        BuildOpt starts[20];
        if (god == G_PROMETHEUS) {
            npre = builds_at(g, src, pre);
            for (int j = 0; j < npre; j++) {
                gen_build(g, src, &pre[j]);
                int won = board_win(g);
                if (won != -1) end(g, 0, won);
                else starts[nstarts++] = pre[j];
                ungen_build(g);
            }
        }
        for (int s = 0; s < nstarts; s++) {
            int not_up = s > 0;
            if (s > 0) gen_build(g, src, &starts[s]);
            if (god == G_TRITON) {
                triton(g, i);
            } else {
                int n = moves_from(g, i, -1, not_up, ms);
                for (int j = 0; j < n; j++) {
                    step_to(g, i, &ms[j]);
                    if (ms[j].win) {
                        end(g, ms[j].up, me);
                        unstep(g, i, src, &ms[j]);
                        continue;
                    }
                    build_phase(g, i, ms[j].up);
                    if (god == G_ARTEMIS) {
                        int d = ms[j].d;
                        int n2 = moves_from(g, i, src, 0, ms2);
                        for (int j2 = 0; j2 < n2; j2++) {
                            step_to(g, i, &ms2[j2]);
                            int up2 = ms[j].up || ms2[j2].up;
                            if (ms2[j2].win) end(g, up2, me);
                            else build_phase(g, i, up2);
                            unstep(g, i, d, &ms2[j2]);
                        }
                    }
                    unstep(g, i, src, &ms[j]);
                }
            }
            if (s > 0) ungen_build(g);
        }
    }
    if (full) *full = g->full;
    return g->n;
}

/* Whether `seat`, on turn, has a winning first move (santorini_twin.GodTwin.can_win). */
static int can_win(const Pos *p, const int gods[2], int seat) {
    int god = gods[seat], opp = 1 - seat, ogod = gods[opp];
    int no_up = ogod == G_ATHENA && (p->mu >> opp & 1);
    int pan = god == G_PAN && ogod != G_HADES;
    if (no_up && !pan) return 0;
    if (!pan && !god && !ogod) {
        /* no gods: a worker on level 2 next to a free level-3 cell */
        uint32_t l3 = p->lv[3] & ~p->occ;
        for (int i = 2 * seat; i < 2 * seat + 2; i++)
            if (p->h[p->wk[i]] == 2 && (NBM[p->wk[i]] & l3)) return 1;
        return 0;
    }
    int hera = ogod == G_HERA;
    int force = god == G_APOLLO ? 1 : god == G_MINOTAUR ? 2 : 0;
    for (int i = 2 * seat; i < 2 * seat + 2; i++) {
        int src = p->wk[i], hs = p->h[src];
        if (hs < 2 && !pan) continue;
        if (ogod == G_HYPNUS && hs > p->h[p->wk[i ^ 1]]) continue;
        for (int j = 0; j < NBN[src]; j++) {
            int d = NB[src][j], hd = p->h[d];
            if (hd >= 4) continue;
            if (!((hd == 3 && hs == 2 && !no_up) || (pan && hs - hd >= 2))) continue;
            if (hera && (EDGE >> d & 1)) continue;
            int v = worker_at(p->wk, d);
            if (v >= 0) {
                if ((v >> 1) == seat || !force) continue;
                if (force == 2) {
                    int to = BEHIND[src][d];
                    if (to < 0 || p->h[to] >= 4 || worker_at(p->wk, to) >= 0) continue;
                }
            }
            return 1;
        }
    }
    return 0;
}

/* Without gods: whether the opponent of the side to move can still win at once after
 * the side's turn `m` (a level-2 worker of theirs beside a free level-3 cell), from the
 * turn's changes alone, without making it (their workers and the cells under them are
 * as before: no god moves or builds under another's worker). */
static int mortal_still_loses(const Pos *p, const Move *m) {
    uint32_t occ = p->occ, l3 = p->lv[3];
    for (int w = 0; w < m->nw; w++) occ = (occ & ~(1u << m->wfrom[w])) | 1u << m->wto[w];
    for (int b = 0; b < m->nb; b++) {
        uint32_t bit = 1u << m->bc[b];
        l3 = m->bnew[b] == 3 ? (l3 | bit) : (l3 & ~bit);
    }
    uint32_t free3 = l3 & ~occ;
    int opp = 1 - p->turn;
    for (int i = 2 * opp; i < 2 * opp + 2; i++)
        if (p->h[p->wk[i]] == 2 && (NBM[p->wk[i]] & free3)) return 1;
    return 0;
}

/* ------------------------------------------------------------------- evaluation */

#define N_LEARNED 6

/* santorini_eval.learned_seat_features, weighted by `ext` (LEARNED_FEATURES). */
static int eval_learned(const Pos *p, int seat, uint32_t domes, uint32_t free_, const uint32_t *le,
                        const int *ext) {
    int a = p->wk[2 * seat], b = p->wk[2 * seat + 1];
    uint32_t mine = NBM[a] | NBM[b];
    uint32_t theirs = NBM[p->wk[2 - 2 * seat]] | NBM[p->wk[3 - 2 * seat]];
    uint32_t own = mine & free_ & ~theirs;
    int v = popc(own & p->lv[1]) * ext[0] + popc(own & p->lv[2]) * ext[1] +
            popc(own & p->lv[3]) * ext[2];
    int cramped = 0;
    int ws[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        int top = p->h[ws[k]] + 1;
        if (popc(NBM[ws[k]] & free_ & le[top > 3 ? 3 : top]) <= 1) cramped++;
    }
    int dr = a / 5 - b / 5, dc = a % 5 - b % 5;
    if (dr < 0) dr = -dr;
    if (dc < 0) dc = -dc;
    return v + cramped * ext[3] + (dr > dc ? dr : dc) * ext[4] + popc(mine & domes) * ext[5];
}

#define N_TABLE 28

/* santorini_eval.table_seat_features, weighted by `tab` (TABLE_FEATURES). */
static int eval_table(const Pos *p, int seat, uint32_t domes, uint32_t free_, const uint32_t *le,
                      const int *tab) {
    int v = 0;
    uint32_t threats = 0, pre = 0, reach2 = 0;
    uint32_t l3free = p->lv[3] & ~p->occ;
    for (int k = 0; k < 2; k++) {
        int src = p->wk[2 * seat + k], hs = p->h[src];
        uint32_t nbm = NBM[src], fr = nbm & free_;
        if (hs < 3) v += tab[3 * CLS[src] + hs];
        int down = hs ? popc(fr & le[hs - 1]) : 0;
        int same = popc(fr & p->lv[hs]);
        int up = hs < 3 ? popc(fr & p->lv[hs + 1]) : 0;
        int high = popc(fr) - down - same - up;
        v += down * tab[18] + same * tab[19] + up * tab[20] + high * tab[21] +
             popc(nbm & domes & ~p->occ) * tab[22] + popc(nbm & p->occ) * tab[23];
        if (hs == 2) threats |= fr & p->lv[3];
        if (hs >= 1) {
            uint32_t two = fr & p->lv[2];
            reach2 |= two;
            if (hs == 1)
                for (uint32_t b = two; b; b &= b - 1)
                    if (NBM[__builtin_ctz(b)] & l3free) pre |= b & -b;
        }
    }
    uint32_t near_them = NBM[p->wk[2 - 2 * seat]] | NBM[p->wk[3 - 2 * seat]];
    return v + popc(pre) * tab[24] + (popc(threats) >= 2) * tab[25] +
           popc(threats & ~near_them) * tab[26] + popc(reach2) * tab[27];
}

/* santorini_eval.evaluate_mortal, from `root`'s view (weights: the 10 FEATURES, then
   the LEARNED_FEATURES' when `ext` is not NULL). */
static int eval_mortal(const Pos *p, int root, const int *wt, const int *ext, const int *tab) {
    int total = 0;
    uint32_t domes = p->lv[4] | p->lv[5] | p->lv[6] | p->lv[7];
    uint32_t free_ = ~(p->occ | domes) & 0x1FFFFFF;
    uint32_t le[4];
    le[0] = p->lv[0];
    le[1] = le[0] | p->lv[1];
    le[2] = le[1] | p->lv[2];
    le[3] = le[2] | p->lv[3];
    for (int seat = 0; seat < 2; seat++) {
        int a = p->wk[2 * seat], b = p->wk[2 * seat + 1];
        int v = 0;
        uint32_t threats = 0, setups = 0;
        int ws[2] = {a, b};
        for (int k = 0; k < 2; k++) {
            int src = ws[k], hs = p->h[src];
            v += CENTRE[src] * wt[7];
            if (hs == 1) v += wt[0];
            else if (hs == 2) v += wt[1];
            int top = hs + 1;
            uint32_t reach = NBM[src] & free_ & le[top > 3 ? 3 : top];
            v += popc(reach) * wt[2];
            if (top < 3) v += popc(reach & p->lv[top]) * wt[3];
            if (hs == 2) {
                threats |= reach & p->lv[3];
                setups |= reach & p->lv[2];
            }
        }
        if (threats) v += popc(threats) * (seat == p->turn ? wt[4] : wt[5]);
        v += popc(setups) * wt[6];
        uint32_t hot = 0;
        int o1 = p->wk[2 - 2 * seat], o2 = p->wk[3 - 2 * seat];
        uint32_t hotcells = (p->lv[2] | p->lv[3]) & ~p->occ;
        if (p->h[o1] == 2) hot |= NBM[o1] & hotcells;
        if (p->h[o2] == 2) hot |= NBM[o2] & hotcells;
        if (hot) v += popc(hot & (NBM[a] | NBM[b])) * wt[8];
        if (seat == p->turn) v += wt[9];
        if (ext != NULL) v += eval_learned(p, seat, domes, free_, le, ext);
        if (tab != NULL) v += eval_table(p, seat, domes, free_, le, tab);
        total += seat == root ? v : -v;
    }
    return total;
}

/* santorini_eval.god_threats: (cells it wins on, level-3 cells by a second move) */
static void god_threats(const Pos *p, const int gods[2], int seat, int *wins_out, int *twice_out) {
    int god = gods[seat], ogod = gods[1 - seat];
    int no_up = ogod == G_ATHENA && (p->mu >> (1 - seat) & 1);
    int pan = god == G_PAN && ogod != G_HADES;
    int hera = ogod == G_HERA;
    int force = god == G_APOLLO ? 1 : god == G_MINOTAUR ? 2 : 0;
    int dbl = (god == G_ARTEMIS || god == G_TRITON) && !no_up;
    uint32_t wins = 0, twice = 0;
    for (int i = 2 * seat; i < 2 * seat + 2; i++) {
        int src = p->wk[i], hs = p->h[src];
        if (ogod == G_HYPNUS && hs > p->h[p->wk[i ^ 1]]) continue;
        for (int j = 0; j < NBN[src]; j++) {
            int d = NB[src][j], hd = p->h[d];
            if (hd >= 4) continue;
            if ((hd == 3 && hs == 2 && !no_up) || (pan && hs - hd >= 2)) {
                if (hera && (EDGE >> d & 1)) continue;
                int v = worker_at(p->wk, d);
                if (v >= 0) {
                    if ((v >> 1) == seat || !force) continue;
                    if (force == 2) {
                        int to = BEHIND[src][d];
                        if (to < 0 || p->h[to] >= 4 || worker_at(p->wk, to) >= 0) continue;
                    }
                }
                wins |= 1u << d;
            } else if (dbl && hd == 2 && hs >= 1 && !(p->occ >> d & 1)) {
                if (god == G_TRITON && !(EDGE >> d & 1)) continue;
                for (int j2 = 0; j2 < NBN[d]; j2++) {
                    int e = NB[d][j2];
                    if (e != src && p->h[e] == 3 && !(p->occ >> e & 1) && !(hera && (EDGE >> e & 1)))
                        twice |= 1u << e;
                }
            }
        }
    }
    *wins_out = popc(wins);
    *twice_out = popc(twice & ~wins);
}

typedef struct {
    int wt[10];   /* evaluate_mortal's weights */
    int gwt[13];  /* evaluate_gods' weights (GOD_FEATURES) */
    int has_gods; /* evaluate with gwt (evaluate_gods) */
    int ext[N_LEARNED]; /* the learned evaluation's LEARNED_FEATURES weights */
    int has_ext;  /* a mortal game evaluated with ext too */
    int tab[N_TABLE]; /* the table evaluation's TABLE_FEATURES weights */
    int has_tab;  /* a mortal game evaluated with tab too */
} Weights;

static int evaluate(const Pos *p, const int gods[2], const Weights *W, int root) {
    if (p->net != NULL && !W->has_gods) {
        int v = net_eval(p);
        v = root == p->turn ? v : -v;
        if (p->net->residual)
            v += eval_mortal(p, root, W->wt, W->has_ext ? W->ext : NULL, W->has_tab ? W->tab : NULL);
        return v;
    }
    if (!W->has_gods)
        return eval_mortal(p, root, W->wt, W->has_ext ? W->ext : NULL, W->has_tab ? W->tab : NULL);
    int base[10];
    memcpy(base, W->gwt, sizeof base);
    int w_tm = base[4], w_tw = base[5];
    base[4] = base[5] = 0;
    int total = eval_mortal(p, root, base, NULL, NULL);
    for (int seat = 0; seat < 2; seat++) {
        int wins, twice;
        god_threats(p, gods, seat, &wins, &twice);
        int v = wins * (seat == p->turn ? w_tm : w_tw) + twice * W->gwt[12];
        if (gods[1 - seat] == G_ATHENA && (p->mu >> (1 - seat) & 1)) v += W->gwt[10];
        if (gods[seat] == G_CHRONUS) v += W->gwt[11] * popc(p->lv[4]);
        total += seat == root ? v : -v;
    }
    return total;
}

/* ------------------------------------------------------------------------ search */

typedef struct {
    uint64_t key;
    int32_t value;
    uint32_t move; /* id */
    uint32_t gen; /* the table's generation: older entries count as empty */
    int8_t depth;
    uint8_t flag;
} TTEntry;

/* What a search did, for measuring it (Core.stats(); benchmarks/santorini_gap.py):
 * nodes by ply, nodes at the end of each iteration, the nodes that cut and whether the
 * first move searched did, the table's probes, hits (key and generation match) and
 * returns. Plain counters: their cost is lost in the noise of a node. */
#define STAT_PLY 64
typedef struct {
    long long ply_nodes[STAT_PLY];
    long long iter_nodes[MAX_PLY];
    int iters;
    long long cut_nodes, first_cuts, cut_index_sum; /* nodes that failed high */
    long long all_nodes;                            /* nodes searched that did not */
    long long tt_probes, tt_hits, tt_returns;
    long long researches; /* reduced searches that beat alpha and were searched again */
    long long check_nodes, check_moves; /* nodes facing a win to stop, and their turns */
} Stats;

typedef struct {
    PyObject_HEAD
    TTEntry *tt;
    size_t tt_mask;
    Move *stack;
    Route *routes;
    uint32_t gen;
    int busy;
    uint32_t killers[MAX_PLY][2];
    int32_t history[2][4 * 25 * 26];
    int32_t hist2[2][HIST2]; /* SEL_HIST: by the mover's from, to and first build */
    uint64_t dedup_key[MAX_GEN];
    uint32_t dedup_stamp[MAX_GEN];
    uint32_t stamp;
    Stats stats; /* the last search's */
} CoreObject;

typedef struct {
    CoreObject *core;
    Pos pos;
    int gods[2];
    Weights W;
    int use_tt;
    int reduce; /* late move reductions (off: the value at a depth is exact) */
    int sel;    /* SEL_* bits (0: the exact full-width search) */
    uint8_t nulled[MAX_PLY + 1]; /* the move into this ply was a null move */
    int evals[MAX_PLY + 1];      /* SEL_RFPD: the static evaluation at each ply (NO_EVAL: none) */
    int dedup;
    long long nodes, max_nodes;
    PyObject *clock;
    double deadline;
    int timed;
    int monotonic; /* the clock is CLOCK_MONOTONIC: read it without the GIL */
    int stop;
    int error;
    PyThreadState *ts;
    /* the root move that beat the last iteration's best in an iteration cut short */
    int partial_index;
    int partial_value;
    Stats st;
} Search;

static double monotonic_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check_clock(Search *S) {
    if (S->nodes >= S->max_nodes) {
        S->stop = 1;
        return;
    }
    if (!S->timed) return;
    if (S->monotonic) {
        if (monotonic_now() >= S->deadline) S->stop = 1;
        return;
    }
    PyEval_RestoreThread(S->ts);
    PyObject *r = PyObject_CallNoArgs(S->clock);
    if (r == NULL) {
        S->error = 1;
        S->stop = 1;
    } else {
        double now = PyFloat_AsDouble(r);
        Py_DECREF(r);
        if (now == -1.0 && PyErr_Occurred()) {
            S->error = 1;
            S->stop = 1;
        } else if (now >= S->deadline) {
            S->stop = 1;
        }
    }
    S->ts = PyEval_SaveThread();
}

static inline int hist_index(const Move *m) {
    int w = (m->id >> 1) & 1, dst = (m->id >> 2) & 31, b0 = m->nb ? m->bc[0] : -1;
    if (!(m->id & 1)) dst = 0;
    return (w * 25 + dst) * 26 + (b0 + 1);
}

/* SEL_HIST's index of a turn: the mover's worker's from and to cells (25: none moved)
 * and its first build (25: none). */
static inline int hist2_index(const Pos *p, const Move *m) {
    int from = 25, to = 25, b0 = m->nb ? m->bc[0] : 25;
    for (int w = 0; w < m->nw; w++)
        if ((m->wi[w] >> 1) == p->turn) {
            from = m->wfrom[w];
            to = m->wto[w];
            break;
        }
    return (from * 26 + to) * 26 + b0;
}

/* History with gravity: the entry moves by `bonus` and is pulled back towards 0 the
 * nearer it is to HIST_MAX, so it stays within +-HIST_MAX and follows recent cuts. */
static inline void hist2_update(int32_t *h, int bonus) {
    int ab = bonus < 0 ? -bonus : bonus;
    *h += bonus - (int32_t)((int64_t)*h * ab / HIST_MAX);
}

/* Threat cells of `seat`: free level-2/3 cells next to its level-2 workers. */
static uint32_t danger_cells(const Pos *p, int seat) {
    uint32_t out = 0, cells = (p->lv[2] | p->lv[3]) & ~p->occ;
    for (int i = 2 * seat; i < 2 * seat + 2; i++)
        if (p->h[p->wk[i]] == 2) out |= NBM[p->wk[i]] & cells;
    return out;
}

static void score_moves(Search *S, Move *ms, int n, int ply, uint32_t hash_move) {
    const Pos *p = &S->pos;
    int me = p->turn;
    uint32_t danger = danger_cells(p, 1 - me);
    uint32_t k0 = ply < MAX_PLY ? S->core->killers[ply][0] : 0;
    uint32_t k1 = ply < MAX_PLY ? S->core->killers[ply][1] : 0;
    const int32_t *hist = S->core->history[me];
    const int32_t *hist2 = S->core->hist2[me];
    int use2 = S->sel & SEL_HIST;
    for (int j = 0; j < n; j++) {
        Move *m = &ms[j];
        m->pruned = 0;
        int32_t s;
        if (m->id == hash_move && hash_move) {
            s = 1 << 30;
        } else if (m->won >= 0) {
            s = m->won == me ? (1 << 29) : -(1 << 29);
        } else {
            if (use2) {
                s = hist2[hist2_index(p, m)] * 16;
            } else {
                s = hist[hist_index(m)];
                if (s > (1 << 22)) s = 1 << 22;
            }
            if (m->id == k0 || m->id == k1) s += 1 << 24;
            for (int b = 0; b < m->nb; b++) {
                if (danger >> m->bc[b] & 1) {
                    int nc = m->bnew[b];
                    if (nc >= 4) s += 1 << 25;
                    else if (nc == 3) s -= 1 << 25;
                }
            }
            for (int w = 0; w < m->nw; w++) {
                if ((m->wi[w] >> 1) != me) continue;
                int d = m->wto[w];
                s += p->h[d] * 64;
                if (danger >> d & 1) s += 1 << 23;
            }
        }
        m->score = s;
    }
}

static inline void pick(Move *ms, int j, int n) {
    int best = j;
    for (int k = j + 1; k < n; k++)
        if (ms[k].score > ms[best].score) best = k;
    if (best != j) {
        Move t = ms[j];
        ms[j] = ms[best];
        ms[best] = t;
    }
}

/* Duplicated ends (the same position by two routes) searched once. */
static int dedup(Search *S, Move *ms, int n) {
    CoreObject *c = S->core;
    c->stamp++;
    if (c->stamp == 0) {
        memset(c->dedup_stamp, 0, sizeof c->dedup_stamp);
        c->stamp = 1;
    }
    int out = 0;
    for (int j = 0; j < n; j++) {
        uint64_t k = ms[j].key_new ^ (uint64_t)(ms[j].won + 1) * 0x9E3779B97F4A7C15ull;
        size_t slot = (size_t)(k ^ (k >> 29)) & (MAX_GEN - 1);
        int dup = 0;
        while (c->dedup_stamp[slot] == c->stamp) {
            if (c->dedup_key[slot] == k) {
                dup = 1;
                break;
            }
            slot = (slot + 1) & (MAX_GEN - 1);
        }
        if (dup) continue;
        c->dedup_stamp[slot] = c->stamp;
        c->dedup_key[slot] = k;
        if (out != j) ms[out] = ms[j];
        out++;
    }
    return out;
}

static int negamax(Search *S, Move *sp, int depth, int alpha, int beta, int ply, int ext);

/* The value for the side to move of the position after `m` (made), searched to depth. */
static inline int child_value(Search *S, Move *sp, Move *m, int depth, int alpha, int beta,
                              int ply, int ext) {
    int me = S->pos.turn;
    if (m->won >= 0) {
        S->nodes++;
        return m->won == me ? WIN - ply - 1 : -(WIN - ply - 1);
    }
    make(&S->pos, m);
    int v = -negamax(S, sp, depth - 1, -beta, -alpha, ply + 1, ext);
    unmake(&S->pos, m);
    return v;
}

/* Whether a turn is quiet for the selective search: no win, no table move, killer,
 * block or step onto a threat cell (all scored at 1 << 23 or more), no worker of the
 * mover going up. */
static inline int quiet_move(const Pos *p, const Move *m) {
    if (m->won >= 0 || m->score >= (1 << 23)) return 0;
    for (int w = 0; w < m->nw; w++)
        if ((m->wi[w] >> 1) == p->turn && p->h[m->wto[w]] > p->h[m->wfrom[w]]) return 0;
    return 1;
}

static int LMR_TABLE[32][64];

static void init_lmr(void) {
    /* reduction = 0.5 + ln(depth) ln(move index) / 2.25, in whole plies (no libm: a
     * table of ln at the integers, computed by series once) */
    double ln[64];
    ln[0] = 0.0;
    for (int k = 1; k < 64; k++) {
        /* ln k = 2 atanh((k-1)/(k+1)) */
        double x = (double)(k - 1) / (double)(k + 1), x2 = x * x, t = x, sum = 0.0;
        for (int q = 1; q < 200; q += 2) {
            sum += t / q;
            t *= x2;
        }
        ln[k] = 2.0 * sum;
    }
    for (int d = 0; d < 32; d++)
        for (int j = 0; j < 64; j++)
            LMR_TABLE[d][j] = (d && j) ? (int)(0.5 + ln[d] * ln[j] / 2.25) : 0;
}

static int negamax(Search *S, Move *sp, int depth, int alpha, int beta, int ply, int ext) {
    Pos *p = &S->pos;
    S->nodes++;
    S->st.ply_nodes[ply < STAT_PLY ? ply : STAT_PLY - 1]++;
    if ((S->nodes & (CLOCK_EVERY - 1)) == 0 || S->nodes >= S->max_nodes) check_clock(S);
    if (S->stop) return 0;
    int me = p->turn;
    int sel = S->sel;
    if (can_win(p, S->gods, me)) return WIN - ply - 1;
    /* in_check: the opponent wins on its next move unless this turn stops it */
    int in_check = 0;
    if (depth <= 0) {
        int max_ext = (sel & SEL_QS) ? MAX_QEXT : MAX_EXT;
        if (ext < max_ext && can_win(p, S->gods, 1 - me)) {
            depth = 1;
            ext++;
            in_check = 1;
        } else {
            return evaluate(p, S->gods, &S->W, me);
        }
    } else if (sel) {
        in_check = can_win(p, S->gods, 1 - me);
        /* a threat answered inside the tree costs no depth (santorini-ai's check
         * extension), within the line's budget of extensions */
        if (in_check && (sel & SEL_QS) && ext < MAX_QEXT) {
            depth++;
            ext++;
        }
    }
    if (ply >= MAX_PLY - 2) return evaluate(p, S->gods, &S->W, me);
    uint32_t hash_move = 0;
    TTEntry *e = NULL;
    if (S->use_tt) {
        e = &S->core->tt[p->key & S->core->tt_mask];
        S->st.tt_probes++;
        if (e->key == p->key && e->gen == S->core->gen && e->flag != 0) {
            hash_move = e->move;
            S->st.tt_hits++;
            if (e->depth >= depth) {
                int v = e->value;
                if (v > MATE) v -= ply;
                else if (v < -MATE) v += ply;
                if (e->flag == EXACT || (e->flag == LOWER && v >= beta) ||
                    (e->flag == UPPER && v <= alpha)) {
                    S->st.tt_returns++;
                    return v;
                }
            }
        }
    }
    /* no table move four or more plies from the horizon: this node was not worth
     * keeping before, search it a ply shallower (santorini-ai's rule) */
    if ((sel & SEL_IIR) && depth >= 4 && !hash_move) depth--;
    int pv = beta - alpha > 1;
    int improving = 1; /* unknown (a PV node, a threat to answer): as if improving */
    S->evals[ply] = NO_EVAL;
    if (sel && !pv && !in_check && beta < MATE && beta > -MATE) {
        int ev = evaluate(p, S->gods, &S->W, me);
        S->evals[ply] = ev;
        /* reverse futility: near the horizon, far above beta with nothing to answer */
        if ((sel & SEL_RFP) && depth <= 3 && ev - RFP_MARGIN * depth >= beta) return ev - RFP_MARGIN * depth;
        improving = ply >= 2 && S->evals[ply - 2] != NO_EVAL && ev > S->evals[ply - 2];
        if ((sel & SEL_RFPD) && depth <= RFPD_DEPTH) {
            /* santorini-ai's wider rule: further from the horizon, and half the margin
             * off when the side's evaluation rose since its last turn (improving) */
            int margin = RFP_MARGIN * depth - improving * (RFP_MARGIN / 2);
            if (ev - margin >= beta) return ev - margin;
        }
        /* null move: the opponent moving twice still cannot bring it below beta */
        if ((sel & SEL_NMP) && depth >= 3 && !S->nulled[ply] && ev >= beta) {
            int r = 2 + depth / 4;
            uint64_t key = p->key;
            p->turn ^= 1;
            p->key ^= Z_TURN[0] ^ Z_TURN[1];
            S->nulled[ply + 1] = 1;
            int v = -negamax(S, sp, depth - 1 - r, -beta, -beta + 1, ply + 1, ext);
            S->nulled[ply + 1] = 0;
            p->turn ^= 1;
            p->key = key;
            if (S->stop) return 0;
            if (v >= beta) return v > MATE ? beta : v;
        }
    }
    if (sp + MAX_GEN > S->core->stack + STACK_MOVES) return evaluate(p, S->gods, &S->W, me);
    int full = 0;
    int n = generate(p, S->gods, sp, MAX_GEN, NULL, &full);
    if (n == 0) return -(WIN - ply); /* stuck: the side to move loses */
    if (in_check) {
        S->st.check_nodes++;
        S->st.check_moves += n;
        if (sel & SEL_BLK) {
            /* santorini-ai's key squares: a turn that leaves the opponent's win standing
             * loses at the next ply whatever follows (the child's first test), and every
             * turn that stops it is worth more, so only those are searched (the same
             * value); without gods from the turn's changes, with gods by making it */
            int mortal = !S->gods[0] && !S->gods[1];
            int kept = 0;
            for (int j = 0; j < n; j++) {
                int loses = 0;
                if (sp[j].won < 0) {
                    if (mortal) {
                        loses = mortal_still_loses(p, &sp[j]);
                    } else {
                        make(p, &sp[j]);
                        loses = can_win(p, S->gods, p->turn);
                        unmake(p, &sp[j]);
                    }
                }
                if (!loses) {
                    if (kept != j) sp[kept] = sp[j];
                    kept++;
                }
            }
            if (kept == 0) return -(WIN - ply - 2);
            n = kept;
        }
    }
    if (S->dedup) n = dedup(S, sp, n);
    score_moves(S, sp, n, ply, hash_move);
    int a0 = alpha;
    int best = -WIN - 1;
    uint32_t best_id = sp[0].id;
    int skipped_from = -1; /* late move pruning: the first move left out */
    for (int pass = 0; pass < 2; pass++) {
        int j0 = 0;
        if (pass == 1) {
            /* moves were left out and the rest all lose: search them after all, so
             * that a loss (or an opponent's win) is never claimed on a pruned line */
            if (skipped_from < 0 || best > -MATE || alpha >= beta) break;
            j0 = skipped_from;
        }
        for (int j = j0; j < n; j++) {
            if (pass == 0) pick(sp, j, n);
            Move *m = &sp[j];
            int quiet = sel && !in_check && quiet_move(p, m);
            if (pass == 1 && !m->pruned) continue;
            int v;
            if (j == 0) {
                v = child_value(S, sp + n, m, depth, alpha, beta, ply, ext);
            } else if (sel) {
                if (pass == 0 && !pv && quiet &&
                    (((sel & SEL_LMP) && depth == 1 && j >= LMP_COUNT) ||
                     ((sel & SEL_FP) && depth <= 2 && S->evals[ply] != NO_EVAL &&
                      S->evals[ply] + FP_MARGIN * depth <= alpha) ||
                     ((sel & SEL_HP) && depth <= 3 && j >= 3 &&
                      S->core->hist2[me][hist2_index(p, m)] < -HP_MARGIN * depth))) {
                    if (skipped_from < 0) skipped_from = j;
                    m->pruned = 1;
                    continue;
                }
                int r = 0;
                if ((sel & SEL_LMR) && depth >= 2 && j >= 2 && quiet) {
                    r = LMR_TABLE[depth < 31 ? depth : 31][j < 63 ? j : 63] + !pv;
                    /* SEL_HIST: a good history reduces less, a bad one more */
                    if (sel & SEL_HIST) r -= S->core->hist2[me][hist2_index(p, m)] / 8192;
                    if ((sel & SEL_LMRI) && !improving) r++;
                    if (r < 0) r = 0;
                    if (r > depth - 1) r = depth - 1;
                }
                v = child_value(S, sp + n, m, depth - r, alpha, alpha + 1, ply, ext);
                if (!S->stop && r && v > alpha) {
                    S->st.researches++;
                    v = child_value(S, sp + n, m, depth, alpha, alpha + 1, ply, ext);
                }
                if (!S->stop && v > alpha && v < beta)
                    v = child_value(S, sp + n, m, depth, alpha, beta, ply, ext);
            } else {
                /* late quiet moves (no table move, win, killer, block) far from the
                 * horizon: a shallower null-window search first, the full one if it
                 * beats alpha */
                int r = 0;
                if (S->reduce && depth >= 3 && j >= LMR_AFTER && m->won < 0 && m->score < (1 << 23))
                    r = (j >= 4 * LMR_AFTER && depth >= 4) ? 2 : 1;
                v = child_value(S, sp + n, m, depth - r, alpha, alpha + 1, ply, ext);
                if (!S->stop && r && v > alpha) {
                    S->st.researches++;
                    v = child_value(S, sp + n, m, depth, alpha, alpha + 1, ply, ext);
                }
                if (!S->stop && v > alpha && v < beta)
                    v = child_value(S, sp + n, m, depth, alpha, beta, ply, ext);
            }
            if (S->stop) return 0;
            if (v > best) {
                best = v;
                best_id = m->id;
                if (v > alpha) {
                    alpha = v;
                    if (alpha >= beta) {
                        S->st.cut_nodes++;
                        S->st.first_cuts += j == 0;
                        S->st.cut_index_sum += j;
                        if (m->won < 0 && ply < MAX_PLY) {
                            uint32_t *k = S->core->killers[ply];
                            if (k[0] != m->id) {
                                k[1] = k[0];
                                k[0] = m->id;
                            }
                            if (sel & SEL_HIST) {
                                /* the cut move up, the quiet moves searched before it down */
                                int bonus = depth * depth * 32;
                                if (bonus > 2048) bonus = 2048;
                                int32_t *h2 = S->core->hist2[me];
                                hist2_update(&h2[hist2_index(p, m)], bonus);
                                for (int q = 0; q < j; q++)
                                    if (sp[q].won < 0 && !sp[q].pruned)
                                        hist2_update(&h2[hist2_index(p, &sp[q])], -bonus);
                            }
                            int32_t *hh = &S->core->history[me][hist_index(m)];
                            *hh += depth * depth;
                            if (*hh > (1 << 22)) {
                                /* age the table: halve every entry */
                                int32_t *all = S->core->history[me];
                                for (int q = 0; q < 4 * 25 * 26; q++) all[q] /= 2;
                            }
                        }
                        break;
                    }
                }
            }
        }
    }
    if (alpha < beta) S->st.all_nodes++;
    if (S->use_tt && e != NULL) {
        e->key = p->key;
        e->gen = S->core->gen;
        e->value = best > MATE ? best + ply : best < -MATE ? best - ply : best;
        e->move = best_id;
        e->depth = (int8_t)(depth > 127 ? 127 : depth);
        e->flag = best <= a0 ? UPPER : best >= beta ? LOWER : EXACT;
    }
    return best;
}

/* One iteration at the root: every root move in `order` (best first from the last
 * iteration), window (alpha, beta); returns the best value, sets *best_j, reorders. */
static int root_iteration(Search *S, Move *ms, int n, int depth, int alpha, int beta,
                          int *best_j, int prev_best_j) {
    Move *sp = ms + n;
    int best = -WIN - 1;
    int a = alpha;
    /* an earlier attempt at this depth (a failed aspiration window) reordered the
     * moves: its partial result names a place that is no longer that move's */
    S->partial_index = -1;
    int vals[MAX_GEN];
    int bj = -1;
    for (int j = 0; j < n; j++) {
        Move *m = &ms[j];
        int v;
        if (j == 0) {
            v = child_value(S, sp, m, depth, a, beta, 0, 0);
        } else {
            v = child_value(S, sp, m, depth, a, a + 1, 0, 0);
            if (!S->stop && v > a && v < beta) v = child_value(S, sp, m, depth, a, beta, 0, 0);
        }
        if (S->stop) break;
        vals[j] = v;
        if (v > best) {
            best = v;
            bj = j;
            if (v > a) {
                a = v;
                if (j > 0 && j != prev_best_j && v < beta) {
                    S->partial_index = j;
                    S->partial_value = v;
                }
                if (a >= beta) {
                    for (int k = j + 1; k < n; k++) vals[k] = -WIN - 2;
                    break;
                }
            }
        }
    }
    if (S->stop) {
        *best_j = bj;
        return best;
    }
    /* reorder: the best first, the rest by value (stable) */
    int idx[MAX_GEN];
    for (int k = 0; k < n; k++) idx[k] = k;
    for (int k = 1; k < n; k++) {
        int x = idx[k], q = k - 1;
        while (q >= 0 && vals[idx[q]] < vals[x]) {
            idx[q + 1] = idx[q];
            q--;
        }
        idx[q + 1] = x;
    }
    Move *tmp = (Move *)malloc(sizeof(Move) * (size_t)n);
    if (tmp != NULL) {
        for (int k = 0; k < n; k++) tmp[k] = ms[idx[k]];
        memcpy(ms, tmp, sizeof(Move) * (size_t)n);
        free(tmp);
        *best_j = 0;
    } else {
        *best_j = bj;
    }
    return best;
}

/* --------------------------------------------------------------- Python glue */

static int parse_gods(PyObject *obj, int gods[2]) {
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2) {
        PyErr_SetString(PyExc_TypeError, "gods: a tuple of two god numbers");
        return 0;
    }
    if (!PyArg_ParseTuple(obj, "ii", &gods[0], &gods[1])) return 0;
    for (int s = 0; s < 2; s++)
        if (gods[s] < 0 || gods[s] >= G_COUNT) {
            PyErr_SetString(PyExc_ValueError, "god index out of range");
            return 0;
        }
    return 1;
}

/* A position from (h, wk, turn, mu, zgods): h 25 codes 0-7, wk 4 distinct cells. */
static int parse_pos(PyObject *h, PyObject *wk, int turn, int mu, unsigned long long zgods,
                     Pos *p) {
    if (!keys_set) {
        PyErr_SetString(PyExc_RuntimeError, "set_keys() first");
        return 0;
    }
    PyObject *hs = PySequence_Fast(h, "h must be a sequence");
    if (hs == NULL) return 0;
    PyObject *ws = PySequence_Fast(wk, "wk must be a sequence");
    if (ws == NULL) {
        Py_DECREF(hs);
        return 0;
    }
    int ok = 1;
    if (PySequence_Fast_GET_SIZE(hs) != 25 || PySequence_Fast_GET_SIZE(ws) != 4) {
        PyErr_SetString(PyExc_ValueError, "25 cells and 4 workers");
        ok = 0;
    }
    for (int c = 0; ok && c < 25; c++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(hs, c));
        if (v < 0 || v > 7) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a cell code is 0-7");
            ok = 0;
        } else {
            p->h[c] = (uint8_t)v;
        }
    }
    for (int w = 0; ok && w < 4; w++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(ws, w));
        if (v < 0 || v > 24) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a worker's cell is 0-24");
            ok = 0;
        } else {
            p->wk[w] = (uint8_t)v;
        }
    }
    Py_DECREF(hs);
    Py_DECREF(ws);
    if (!ok) return 0;
    for (int w = 0; w < 4; w++)
        for (int v = w + 1; v < 4; v++)
            if (p->wk[w] == p->wk[v]) {
                PyErr_SetString(PyExc_ValueError, "two workers on one cell");
                return 0;
            }
    for (int w = 0; w < 4; w++)
        if (p->h[p->wk[w]] >= 4) {
            PyErr_SetString(PyExc_ValueError, "a worker on a dome");
            return 0;
        }
    if (turn < 0 || turn > 1 || mu < 0 || mu > 3) {
        PyErr_SetString(PyExc_ValueError, "turn is 0 or 1, mu 0-3");
        return 0;
    }
    p->turn = (uint8_t)turn;
    p->mu = (uint8_t)mu;
    p->winner = -1;
    p->net = NULL;
    pos_bitboards(p);
    return 1;
}

static uint64_t full_key(const Pos *p, const int gods[2], uint64_t zgods) {
    uint64_t k = Z_TURN[p->turn] ^ zgods;
    for (int c = 0; c < 25; c++) k ^= Z_CODE[c][p->h[c]];
    for (int w = 0; w < 4; w++) k ^= Z_WORKER[w][p->wk[w]];
    int athena = gods[0] == G_ATHENA ? 0 : gods[1] == G_ATHENA ? 1 : -1;
    if (athena >= 0 && (p->mu >> athena & 1)) k ^= Z_ATHENA;
    return k;
}

static PyObject *node_tuple(const Pos *p) {
    PyObject *h = PyTuple_New(25), *wk = PyTuple_New(4);
    if (h == NULL || wk == NULL) {
        Py_XDECREF(h);
        Py_XDECREF(wk);
        return NULL;
    }
    for (int c = 0; c < 25; c++) PyTuple_SET_ITEM(h, c, PyLong_FromLong(p->h[c]));
    for (int w = 0; w < 4; w++) PyTuple_SET_ITEM(wk, w, PyLong_FromLong(p->wk[w]));
    return Py_BuildValue("(KNNiii)", (unsigned long long)p->key, h, wk, (int)p->turn,
                         (int)p->winner, (int)p->mu);
}

static PyObject *steps_tuple(const Route *r) {
    PyObject *t = PyTuple_New(r->n);
    if (t == NULL) return NULL;
    for (int j = 0; j < r->n; j++) PyTuple_SET_ITEM(t, j, PyLong_FromLong(r->steps[j]));
    return t;
}

static int read_u64_list(PyObject *obj, uint64_t *out, Py_ssize_t n) {
    PyObject *s = PySequence_Fast(obj, "a sequence of keys");
    if (s == NULL) return 0;
    if (PySequence_Fast_GET_SIZE(s) != n) {
        PyErr_Format(PyExc_ValueError, "%zd keys expected", n);
        Py_DECREF(s);
        return 0;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        unsigned long long v = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(s, j));
        if (v == (unsigned long long)-1 && PyErr_Occurred()) {
            Py_DECREF(s);
            return 0;
        }
        out[j] = v;
    }
    Py_DECREF(s);
    return 1;
}

static PyObject *py_set_keys(PyObject *self, PyObject *args) {
    PyObject *code, *worker, *turn;
    unsigned long long athena;
    if (!PyArg_ParseTuple(args, "OOOK", &code, &worker, &turn, &athena)) return NULL;
    uint64_t c[200], w[100], t[2];
    if (!read_u64_list(code, c, 200) || !read_u64_list(worker, w, 100) || !read_u64_list(turn, t, 2))
        return NULL;
    memcpy(Z_CODE, c, sizeof c);
    memcpy(Z_WORKER, w, sizeof w);
    memcpy(Z_TURN, t, sizeof t);
    Z_ATHENA = athena;
    keys_set = 1;
    Py_RETURN_NONE;
}

/* children(h, wk, turn, mu, gods, zgods) -> [(steps, (key, h, wk, turn, winner, mu))]
 * in generation order, duplicates included. */
static PyObject *py_children(PyObject *self, PyObject *args) {
    PyObject *h, *wk, *gobj;
    int turn, mu;
    unsigned long long zgods;
    int gods[2];
    Pos p;
    if (!PyArg_ParseTuple(args, "OOiiOK", &h, &wk, &turn, &mu, &gobj, &zgods)) return NULL;
    if (!parse_gods(gobj, gods) || !parse_pos(h, wk, turn, mu, zgods, &p)) return NULL;
    p.key = full_key(&p, gods, zgods);
    Move *ms = (Move *)malloc(sizeof(Move) * MAX_GEN);
    Route *routes = (Route *)malloc(sizeof(Route) * MAX_GEN);
    if (ms == NULL || routes == NULL) {
        free(ms);
        free(routes);
        return PyErr_NoMemory();
    }
    int full = 0;
    int n = generate(&p, gods, ms, MAX_GEN, routes, &full);
    PyObject *out = PyList_New(0);
    for (int j = 0; out != NULL && j < n; j++) {
        Pos q = p;
        make(&q, &ms[j]);
        PyObject *item = Py_BuildValue("(NN)", steps_tuple(&routes[j]), node_tuple(&q));
        if (item == NULL || PyList_Append(out, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(out);
            break;
        }
        Py_DECREF(item);
    }
    free(ms);
    free(routes);
    return out;
}

static PyObject *py_key(PyObject *self, PyObject *args) {
    PyObject *h, *wk, *gobj;
    int turn, mu;
    unsigned long long zgods;
    int gods[2];
    Pos p;
    if (!PyArg_ParseTuple(args, "OOiiOK", &h, &wk, &turn, &mu, &gobj, &zgods)) return NULL;
    if (!parse_gods(gobj, gods) || !parse_pos(h, wk, turn, mu, zgods, &p)) return NULL;
    return PyLong_FromUnsignedLongLong(full_key(&p, gods, zgods));
}

static PyObject *py_can_win(PyObject *self, PyObject *args) {
    PyObject *h, *wk, *gobj;
    int seat, mu;
    int gods[2];
    Pos p;
    if (!PyArg_ParseTuple(args, "OOiiO", &h, &wk, &seat, &mu, &gobj)) return NULL;
    if (!parse_gods(gobj, gods) || !parse_pos(h, wk, seat, mu, 0, &p)) return NULL;
    return PyBool_FromLong(can_win(&p, gods, seat));
}

static int parse_weights(PyObject *wt, PyObject *gwt, Weights *W) {
    PyObject *s = PySequence_Fast(wt, "weights");
    if (s == NULL) return 0;
    Py_ssize_t nw = PySequence_Fast_GET_SIZE(s);
    if (nw != 10 && nw != 10 + N_LEARNED && nw != 10 + N_LEARNED + N_TABLE) {
        Py_DECREF(s);
        PyErr_SetString(PyExc_ValueError,
                        "10 weights, 16 (the learned evaluation) or 44 (the table evaluation)");
        return 0;
    }
    for (int j = 0; j < nw; j++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(s, j));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(s);
            return 0;
        }
        if (v > 100000 || v < -100000) {
            Py_DECREF(s);
            PyErr_SetString(PyExc_ValueError, "a weight beyond 100,000");
            return 0;
        }
        if (j < 10) W->wt[j] = (int)v;
        else if (j < 10 + N_LEARNED) W->ext[j - 10] = (int)v;
        else W->tab[j - 10 - N_LEARNED] = (int)v;
    }
    Py_DECREF(s);
    W->has_ext = nw > 10;
    W->has_tab = nw > 10 + N_LEARNED;
    W->has_gods = 0;
    if (gwt == Py_None) return 1;
    s = PySequence_Fast(gwt, "god weights");
    if (s == NULL) return 0;
    if (PySequence_Fast_GET_SIZE(s) != 13) {
        Py_DECREF(s);
        PyErr_SetString(PyExc_ValueError, "13 god weights");
        return 0;
    }
    for (int j = 0; j < 13; j++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(s, j));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(s);
            return 0;
        }
        if (v > 100000 || v < -100000) {
            Py_DECREF(s);
            PyErr_SetString(PyExc_ValueError, "a weight beyond 100,000");
            return 0;
        }
        W->gwt[j] = (int)v;
    }
    Py_DECREF(s);
    W->has_gods = 1;
    return 1;
}

/* ------------------------------------------------------------------ Net type */

static PyTypeObject NetType;

/* Net(w1, b1, w2, b2, scale, residual=False): w1 NET_IN * NET_H ints row by row, b1 NET_H,
 * w2 2 * NET_H (int16 each), b2 within 2^30, scale 1-10,000; residual: the search's
 * weights evaluate too and the network's value is added (santorini_net.NetWeights). */
static int read_i16(PyObject *obj, int16_t *out, Py_ssize_t n, const char *what) {
    PyObject *s = PySequence_Fast(obj, what);
    if (s == NULL) return 0;
    if (PySequence_Fast_GET_SIZE(s) != n) {
        Py_DECREF(s);
        PyErr_Format(PyExc_ValueError, "%s: %zd integers", what, n);
        return 0;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(s, j));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(s);
            return 0;
        }
        if (v > 32767 || v < -32767) {
            Py_DECREF(s);
            PyErr_Format(PyExc_ValueError, "%s: integers within 32767", what);
            return 0;
        }
        out[j] = (int16_t)v;
    }
    Py_DECREF(s);
    return 1;
}

static int Net_init(NetObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"w1", "b1", "w2", "b2", "scale", "residual", NULL};
    PyObject *w1, *b1, *w2;
    long long b2;
    int scale, residual = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOLi|p", kwlist, &w1, &b1, &w2, &b2, &scale,
                                     &residual))
        return -1;
    self->residual = residual;
    if (b2 > (1LL << 30) || b2 < -(1LL << 30)) {
        PyErr_SetString(PyExc_ValueError, "b2: within 2^30");
        return -1;
    }
    if (scale < 1 || scale > 10000) {
        PyErr_SetString(PyExc_ValueError, "scale: 1-10,000");
        return -1;
    }
    if (!read_i16(w1, &self->w1[0][0], NET_IN * NET_H, "w1") || !read_i16(b1, self->b1, NET_H, "b1") ||
        !read_i16(w2, self->w2, 2 * NET_H, "w2"))
        return -1;
    self->b2 = (int32_t)b2;
    self->scale = scale;
    return 0;
}

static PyTypeObject NetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "meeple.ai._santorini_core.Net",
    .tp_basicsize = sizeof(NetObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Net_init,
    .tp_doc = "The network evaluation's weights (santorini_net.NetWeights).",
};

/* A position's network: None (none) or a Net; its accumulators computed from scratch. */
static int net_arg(PyObject *net, Pos *p) {
    if (net == Py_None) {
        p->net = NULL;
        return 1;
    }
    if (!PyObject_TypeCheck(net, &NetType)) {
        PyErr_SetString(PyExc_TypeError, "net: a Net or None");
        return 0;
    }
    p->net = (const NetObject *)net;
    net_refresh(p);
    return 1;
}

static PyObject *acc_tuple(const Pos *p) {
    PyObject *t = PyTuple_New(2 * NET_H);
    if (t == NULL) return NULL;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < NET_H; i++) PyTuple_SET_ITEM(t, s * NET_H + i, PyLong_FromLong(p->acc[s][i]));
    return t;
}

/* net_walk(net, h, wk, turn, mu, gods, zgods, choices) -> [(accumulators kept by make and
 * unmake, accumulators from scratch, value for the side to move, node)] after each make
 * along the turns `choices` pick (index modulo the turns' count) and after each unmake
 * back: the test that the incremental update is exact. */
static PyObject *py_net_walk(PyObject *self, PyObject *args) {
    PyObject *net, *h, *wk, *gobj, *choices;
    int turn, mu;
    unsigned long long zgods;
    int gods[2];
    Pos p;
    if (!PyArg_ParseTuple(args, "OOOiiOKO", &net, &h, &wk, &turn, &mu, &gobj, &zgods, &choices))
        return NULL;
    if (net == Py_None) {
        PyErr_SetString(PyExc_TypeError, "net: a Net");
        return NULL;
    }
    if (!parse_gods(gobj, gods) || !parse_pos(h, wk, turn, mu, zgods, &p) || !net_arg(net, &p))
        return NULL;
    p.key = full_key(&p, gods, zgods);
    PyObject *cs = PySequence_Fast(choices, "choices must be a sequence");
    if (cs == NULL) return NULL;
    Py_ssize_t nc = PySequence_Fast_GET_SIZE(cs);
    if (nc > 64) {
        Py_DECREF(cs);
        PyErr_SetString(PyExc_ValueError, "at most 64 choices");
        return NULL;
    }
    Move *ms = (Move *)malloc(sizeof(Move) * MAX_GEN);
    Move *chain = (Move *)malloc(sizeof(Move) * 64);
    PyObject *out = PyList_New(0);
    if (ms == NULL || chain == NULL || out == NULL) {
        free(ms);
        free(chain);
        Py_DECREF(cs);
        Py_XDECREF(out);
        return PyErr_NoMemory();
    }
    int made = 0;
    for (int pass = 0; pass < 2 && out != NULL; pass++) {
        int steps = pass == 0 ? (int)nc : made;
        for (int k = 0; k < steps && out != NULL; k++) {
            if (pass == 0) {
                if (p.winner >= 0) break;
                long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(cs, k));
                if (c == -1 && PyErr_Occurred()) {
                    Py_CLEAR(out);
                    break;
                }
                int full = 0;
                int n = generate(&p, gods, ms, MAX_GEN, NULL, &full);
                if (n == 0) break;
                chain[made] = ms[(c < 0 ? -c : c) % n];
                make(&p, &chain[made]);
                made++;
            } else {
                unmake(&p, &chain[made - 1 - k]);
            }
            Pos fresh = p;
            net_refresh(&fresh);
            PyObject *item = Py_BuildValue("(NNiN)", acc_tuple(&p), acc_tuple(&fresh), net_eval(&p),
                                           node_tuple(&p));
            if (item == NULL || PyList_Append(out, item) < 0) {
                Py_XDECREF(item);
                Py_CLEAR(out);
                break;
            }
            Py_DECREF(item);
        }
    }
    Py_DECREF(cs);
    free(ms);
    free(chain);
    return out;
}

/* evaluate(h, wk, root, turn, mu, gods, weights, god_weights or None) */
static PyObject *py_evaluate(PyObject *self, PyObject *args) {
    PyObject *h, *wk, *gobj, *wt, *gwt;
    int root, turn, mu;
    int gods[2];
    Pos p;
    Weights W;
    PyObject *net = Py_None;
    if (!PyArg_ParseTuple(args, "OOiiiOOO|O", &h, &wk, &root, &turn, &mu, &gobj, &wt, &gwt, &net))
        return NULL;
    if (!parse_gods(gobj, gods) || !parse_pos(h, wk, turn, mu, 0, &p) || !parse_weights(wt, gwt, &W))
        return NULL;
    if (root < 0 || root > 1) {
        PyErr_SetString(PyExc_ValueError, "root is 0 or 1");
        return NULL;
    }
    if (!net_arg(net, &p)) return NULL;
    return PyLong_FromLong(evaluate(&p, gods, &W, root));
}

/* ------------------------------------------------------------------ Core type */

static int Core_init(CoreObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"table_bits", NULL};
    int bits = 18;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|i", kwlist, &bits)) return -1;
    if (bits < 10 || bits > 26) {
        PyErr_SetString(PyExc_ValueError, "table_bits is 10-26");
        return -1;
    }
    free(self->tt);
    free(self->stack);
    free(self->routes);
    /* calloc: the table's pages are touched only as the search fills them */
    self->tt = (TTEntry *)calloc((size_t)1 << bits, sizeof(TTEntry));
    self->stack = (Move *)malloc(sizeof(Move) * STACK_MOVES);
    self->routes = (Route *)malloc(sizeof(Route) * MAX_GEN);
    if (self->tt == NULL || self->stack == NULL || self->routes == NULL) {
        free(self->tt);
        free(self->stack);
        free(self->routes);
        self->tt = NULL;
        self->stack = NULL;
        self->routes = NULL;
        PyErr_NoMemory();
        return -1;
    }
    self->tt_mask = ((size_t)1 << bits) - 1;
    memset(self->killers, 0, sizeof self->killers);
    memset(self->history, 0, sizeof self->history);
    memset(self->hist2, 0, sizeof self->hist2);
    memset(self->dedup_stamp, 0, sizeof self->dedup_stamp);
    self->stamp = 0;
    self->gen = 1;
    self->busy = 0;
    return 0;
}

static void Core_dealloc(CoreObject *self) {
    free(self->tt);
    free(self->stack);
    free(self->routes);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Core_clear(CoreObject *self, PyObject *Py_UNUSED(ignored)) {
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the core is searching");
        return NULL;
    }
    /* a new generation: no pass over the table, which may be large */
    self->gen++;
    if (self->gen == 0) {
        memset(self->tt, 0, sizeof(TTEntry) * (self->tt_mask + 1));
        self->gen = 1;
    }
    memset(self->killers, 0, sizeof self->killers);
    memset(self->history, 0, sizeof self->history);
    memset(self->hist2, 0, sizeof self->hist2);
    Py_RETURN_NONE;
}

/* search(h, wk, turn, mu, gods, zgods, weights, god_weights, max_depth, max_nodes,
 *        clock, seconds, use_table)
 * -> (steps, ended, value, depth, nodes, [(depth, value), ...])
 * `value` from the mover's view; steps () when the mover has no turn (it lost). */
static PyObject *Core_search(CoreObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"h", "wk", "turn", "mu", "gods", "zgods", "weights",
                             "god_weights", "max_depth", "max_nodes", "clock", "seconds",
                             "use_table", "stop_fraction", "monotonic", "reductions",
                             "selective", "net", NULL};
    PyObject *h, *wk, *gobj, *wt, *gwt, *clock = Py_None, *net = Py_None;
    int turn, mu, max_depth = 64, use_table = 1, monotonic = 0, reductions = 0, selective = 0;
    long long max_nodes = -1;
    unsigned long long zgods;
    double seconds = -1.0, stop_fraction = 0.6;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOiiOKOO|iLOdpdppiO", kwlist, &h, &wk, &turn, &mu,
                                     &gobj, &zgods, &wt, &gwt, &max_depth, &max_nodes, &clock,
                                     &seconds, &use_table, &stop_fraction, &monotonic,
                                     &reductions, &selective, &net))
        return NULL;
    if (self->tt == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the core is not initialised");
        return NULL;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the core is searching (one search at a time)");
        return NULL;
    }
    Search *S = (Search *)calloc(1, sizeof(Search));
    if (S == NULL) return PyErr_NoMemory();
    S->core = self;
    if (!parse_gods(gobj, S->gods) || !parse_pos(h, wk, turn, mu, zgods, &S->pos) ||
        !parse_weights(wt, gwt, &S->W)) {
        free(S);
        return NULL;
    }
    /* the network evaluates games without gods (with gods the god weights do) */
    if (net != Py_None && !PyObject_TypeCheck(net, &NetType)) {
        free(S);
        PyErr_SetString(PyExc_TypeError, "net: a Net or None");
        return NULL;
    }
    if (S->W.has_gods || S->gods[0] || S->gods[1]) net = Py_None;
    net_arg(net, &S->pos);
    if (max_depth < 1) max_depth = 1;
    if (max_depth > MAX_PLY - 8) max_depth = MAX_PLY - 8;
    S->pos.key = full_key(&S->pos, S->gods, zgods);
    S->use_tt = use_table;
    S->reduce = reductions;
    if (selective < 0 || selective > SEL_ALL) {
        free(S);
        PyErr_SetString(PyExc_ValueError, "selective: a mask of SELECTIVE_* bits");
        return NULL;
    }
    S->sel = selective;
    {
        int g = S->gods[turn], og = S->gods[1 - turn];
        (void)og;
        S->dedup = g == G_DEMETER || g == G_HESTIA || g == G_PROMETHEUS || g == G_TRITON ||
                   g == G_ARTEMIS || g == G_ATLAS || g == G_HEPHAESTUS || g == G_ZEUS ||
                   S->gods[1 - turn] == G_DEMETER || S->gods[1 - turn] == G_HESTIA ||
                   S->gods[1 - turn] == G_PROMETHEUS || S->gods[1 - turn] == G_TRITON ||
                   S->gods[1 - turn] == G_ARTEMIS || S->gods[1 - turn] == G_ATLAS ||
                   S->gods[1 - turn] == G_HEPHAESTUS || S->gods[1 - turn] == G_ZEUS;
    }
    S->max_nodes = max_nodes < 0 ? ((long long)1 << 62) : max_nodes;
    S->timed = clock != Py_None && seconds >= 0;
    S->clock = clock;
    S->monotonic = monotonic;
    S->partial_index = -1;
    double start = 0.0;
    if (S->timed && S->monotonic) {
        start = monotonic_now();
        S->deadline = start + seconds;
    } else if (S->timed) {
        PyObject *r = PyObject_CallNoArgs(clock);
        if (r == NULL) {
            free(S);
            return NULL;
        }
        start = PyFloat_AsDouble(r);
        Py_DECREF(r);
        if (start == -1.0 && PyErr_Occurred()) {
            free(S);
            return NULL;
        }
        S->deadline = start + seconds;
    }
    Move *ms = self->stack;
    Route *routes = self->routes;
    int full = 0;
    int n = generate(&S->pos, S->gods, ms, MAX_GEN, routes, &full);
    PyObject *iters = PyList_New(0);
    if (iters == NULL) {
        free(S);
        return NULL;
    }
    if (n == 0) {
        free(S);
        return Py_BuildValue("(()OiiiN)", Py_True, -WIN, 0, 1, iters);
    }
    n = dedup(S, ms, n);
    /* a winning turn needs no search */
    for (int j = 0; j < n; j++)
        if (ms[j].won == turn) {
            PyObject *r = Py_BuildValue("(NOiiiN)", steps_tuple(&routes[ms[j].gen]), Py_True, WIN - 1, 1, 1, iters);
            free(S);
            return r;
        }
    if (n == 1) {
        PyObject *r = Py_BuildValue("(NOiiiN)", steps_tuple(&routes[ms[0].gen]),
                                    ms[0].won >= 0 ? Py_True : Py_False, 0, 0, 1, iters);
        free(S);
        return r;
    }
    score_moves(S, ms, n, 0, 0);
    /* the static order first: sort by score */
    for (int j = 0; j < n; j++) pick(ms, j, n);
    self->busy = 1;
    int best_j = 0, best_value = 0, done = 0;
    int prev = 0;
    /* the finished iterations, turned into (depth, value) tuples once the GIL is back */
    int iter_value[MAX_PLY];
    int n_iters = 0;
    S->ts = PyEval_SaveThread();
    for (int depth = 1; depth <= max_depth; depth++) {
        int alpha = -WIN - 1, beta = WIN + 1;
        int window = 40;
        if (depth >= 3 && prev > -MATE && prev < MATE) {
            alpha = prev - window;
            beta = prev + window;
        }
        int bj = 0, v;
        for (;;) {
            v = root_iteration(S, ms, n, depth, alpha, beta, &bj, 0);
            if (S->stop) break;
            if (v <= alpha && alpha > -WIN - 1) {
                window *= 4;
                alpha = window > 2000 ? -WIN - 1 : prev - window;
                continue;
            }
            if (v >= beta && beta < WIN + 1) {
                window *= 4;
                beta = window > 2000 ? WIN + 1 : prev + window;
                continue;
            }
            break;
        }
        if (S->stop) {
            /* cut short: a root move proved better than the last best stands */
            if (S->partial_index > 0 && done && S->partial_value > best_value) {
                best_j = S->partial_index;
                best_value = S->partial_value;
            }
            break;
        }
        best_j = bj;
        best_value = v;
        done = depth;
        prev = v;
        iter_value[n_iters++] = v; /* depth n_iters: one iteration a depth from 1 */
        S->st.iter_nodes[S->st.iters++] = S->nodes;
        if (v > MATE || v < -MATE) break; /* a proved result */
        if (S->nodes >= S->max_nodes) break;
        if (S->timed) {
            /* the next iteration costs about this one times its growth: start it only
             * when that fits in the time left */
            double now = 0.0;
            if (S->monotonic) {
                now = monotonic_now();
            } else {
                PyEval_RestoreThread(S->ts);
                PyObject *r = PyObject_CallNoArgs(clock);
                if (r == NULL) {
                    S->error = 1;
                } else {
                    now = PyFloat_AsDouble(r);
                    Py_DECREF(r);
                    if (now == -1.0 && PyErr_Occurred()) S->error = 1;
                }
                S->ts = PyEval_SaveThread();
            }
            if (S->error) break;
            double used = now - start, left = S->deadline - now;
            /* The next iteration starts unless most of the time is spent: one cut
             * short still plays a root move it proved better than the last best, and
             * leaves the table filled for the next turn. */
            if (left <= 0 || used > stop_fraction * seconds) break;
        }
    }
    PyEval_RestoreThread(S->ts);
    self->busy = 0;
    self->stats = S->st;
    for (int j = 0; j < n_iters && !S->error; j++) {
        PyObject *it = Py_BuildValue("(ii)", j + 1, iter_value[j]);
        if (it == NULL || PyList_Append(iters, it) < 0) S->error = 1;
        Py_XDECREF(it);
    }
    if (S->error) {
        Py_DECREF(iters);
        free(S);
        return NULL;
    }
    PyObject *r = Py_BuildValue("(NOiiLN)", steps_tuple(&routes[ms[best_j].gen]),
                                ms[best_j].won >= 0 ? Py_True : Py_False, best_value, done,
                                S->nodes, iters);
    free(S);
    return r;
}

/* stats() -> a dict of the last search's counters (see Stats). */
static PyObject *Core_stats(CoreObject *self, PyObject *Py_UNUSED(ignored)) {
    const Stats *t = &self->stats;
    int top = STAT_PLY;
    while (top > 0 && t->ply_nodes[top - 1] == 0) top--;
    PyObject *ply = PyList_New(top), *iters = PyList_New(t->iters);
    if (ply == NULL || iters == NULL) {
        Py_XDECREF(ply);
        Py_XDECREF(iters);
        return NULL;
    }
    for (int k = 0; k < top; k++) PyList_SET_ITEM(ply, k, PyLong_FromLongLong(t->ply_nodes[k]));
    for (int k = 0; k < t->iters; k++) PyList_SET_ITEM(iters, k, PyLong_FromLongLong(t->iter_nodes[k]));
    return Py_BuildValue("{sNsNsLsLsLsLsLsLsLsLsLsL}", "ply_nodes", ply, "iteration_nodes", iters,
                         "cut_nodes", t->cut_nodes, "first_cuts", t->first_cuts, "cut_index_sum",
                         t->cut_index_sum, "all_nodes", t->all_nodes, "tt_probes", t->tt_probes,
                         "tt_hits", t->tt_hits, "tt_returns", t->tt_returns, "researches",
                         t->researches, "check_nodes", t->check_nodes, "check_moves",
                         t->check_moves);
}

static PyMethodDef Core_methods[] = {
    {"stats", (PyCFunction)Core_stats, METH_NOARGS, "The last search's counters."},
    {"search", (PyCFunction)(void (*)(void))Core_search, METH_VARARGS | METH_KEYWORDS,
     "Search a position (see the C source)."},
    {"clear", (PyCFunction)Core_clear, METH_NOARGS, "Forget the table, killers and history."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "meeple.ai._santorini_core.Core",
    .tp_basicsize = sizeof(CoreObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_methods = Core_methods,
    .tp_doc = "A search with its own transposition table, killers and history.",
};

static PyMethodDef module_methods[] = {
    {"set_keys", py_set_keys, METH_VARARGS, "The twin's Zobrist keys."},
    {"children", py_children, METH_VARARGS, "Every turn of the side to move."},
    {"key", py_key, METH_VARARGS, "A position's Zobrist key."},
    {"can_win", py_can_win, METH_VARARGS, "Whether a seat on turn wins at once."},
    {"evaluate", py_evaluate, METH_VARARGS, "The evaluation of a position."},
    {"net_walk", py_net_walk, METH_VARARGS, "The network's accumulators along made and unmade turns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "meeple.ai._santorini_core",
    "The compiled Santorini search (see _santorini_core.c).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__santorini_core(void) {
    init_tables();
    init_lmr();
    if (PyType_Ready(&CoreType) < 0 || PyType_Ready(&NetType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(&CoreType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&NetType);
    if (PyModule_AddObject(m, "Net", (PyObject *)&NetType) < 0) {
        Py_DECREF(&NetType);
        Py_DECREF(m);
        return NULL;
    }
    PyModule_AddIntConstant(m, "NET_INPUTS", NET_IN);
    PyModule_AddIntConstant(m, "NET_HIDDEN", NET_H);
    PyModule_AddIntConstant(m, "NET_QA", NET_QA);
    PyModule_AddIntConstant(m, "NET_QB", NET_QB);
    PyObject *names = PyTuple_New(G_COUNT);
    if (names == NULL) return NULL;
    PyTuple_SET_ITEM(names, 0, Py_None);
    Py_INCREF(Py_None);
    for (int j = 1; j < G_COUNT; j++) PyTuple_SET_ITEM(names, j, PyUnicode_FromString(GOD_NAMES[j]));
    if (PyModule_AddObject(m, "GODS", names) < 0) return NULL;
    PyModule_AddIntConstant(m, "WIN", WIN);
    PyModule_AddIntConstant(m, "MAX_EXTENSIONS", MAX_EXT);
    PyModule_AddIntConstant(m, "CLOCK_EVERY", CLOCK_EVERY);
    PyModule_AddIntConstant(m, "SELECTIVE_LMR", SEL_LMR);
    PyModule_AddIntConstant(m, "SELECTIVE_RFP", SEL_RFP);
    PyModule_AddIntConstant(m, "SELECTIVE_NMP", SEL_NMP);
    PyModule_AddIntConstant(m, "SELECTIVE_QS", SEL_QS);
    PyModule_AddIntConstant(m, "SELECTIVE_LMP", SEL_LMP);
    PyModule_AddIntConstant(m, "SELECTIVE_IIR", SEL_IIR);
    PyModule_AddIntConstant(m, "SELECTIVE_HIST", SEL_HIST);
    PyModule_AddIntConstant(m, "SELECTIVE_HP", SEL_HP);
    PyModule_AddIntConstant(m, "SELECTIVE_RFPD", SEL_RFPD);
    PyModule_AddIntConstant(m, "SELECTIVE_FP", SEL_FP);
    PyModule_AddIntConstant(m, "SELECTIVE_LMRI", SEL_LMRI);
    PyModule_AddIntConstant(m, "SELECTIVE_BLK", SEL_BLK);
    PyModule_AddIntConstant(m, "SELECTIVE_ALL", SEL_ALL);
    PyModule_AddIntConstant(m, "MAX_QEXT", MAX_QEXT);
    return m;
}
