/* Legal move generation, driven by the rule data in dtb_variant (never by variant name).
 *
 * Quiet moves and capture detection work set-wise: one diagonal step of a whole square set is
 * dtb_board_step (two masked shifts in the dense layout). Capture sequences are a depth-first
 * search per capturing piece over the neighbour table b->next: captured pieces stay on the board
 * until the move ends (they block and cannot be jumped again) and the mover's start square counts
 * as empty. Moves found by different routes with the same (from, to, captured set, promotion)
 * are merged; where the majority rule applies only the sequences taking the most pieces survive.
 * On boards of up to 64 squares (8x8, 10x10) the solver's hot paths run on uint64_t words instead
 * of dtb_bb: the capture test (capturing_men64) and the listing capture search (search64, which
 * leaves the route mode to capture_search), listing the same moves in the same order.
 */
#include "movegen.h"

#include <assert.h>

static inline bool is_forward(dtb_color side, int d) { return (d >> 1) == (int)side; }

/* State of one capture search. In route mode (target != NULL) nothing is listed: the search only
 * looks for a route that realises the target move and keeps its landing squares in path[]. */
typedef struct capture_search {
    const dtb_board *b;
    dtb_movelist *out;
    dtb_bb empty;     /* where a piece may land: the empty squares plus the mover's start square */
    dtb_bb prey;      /* opponent pieces (captured ones included: `captured` masks them out) */
    dtb_bb allowed;   /* pieces the search may jump: everything, or the target's captured set */
    dtb_bb far_row;   /* the mover's promotion row */
    int from;
    int first;        /* first list entry of the current mover: duplicates can only be there */
    int best;         /* most pieces taken by a listed move (majority rule) */
    bool fly, majority, passing;
    int man_dirs[DTB_DIRS];
    int nman_dirs;
    dtb_status status;
    const dtb_move *target;
    bool found;
    uint8_t path[DTB_MAX_SQUARES];
} capture_search;

/* Lists a finished capture of the piece on `from` in out, applying the majority rule (best: most
 * pieces taken by a listed move) and merging duplicates, which can only be among this piece's
 * moves (from *first on). A capture of one piece has one route only, so only longer ones need the
 * duplicate scan. Shared by both searches below. */
static inline __attribute__((always_inline)) void list_capture(dtb_movelist *out, int *first,
                                                               int *best, bool majority,
                                                               dtb_status *status, int from,
                                                               int to, dtb_bb captured, int n,
                                                               bool promotes)
{
    if (majority) {
        if (n < *best)
            return;
        if (n > *best) {
            *best = n;
            out->count = 0;
            *first = 0;
        }
    }
    const int count = out->count;
    if (n >= 2)
        for (int i = *first; i < count; i++) {
            const dtb_move *m = &out->moves[i];
            if (m->to == to && m->captured == captured && m->promotes == promotes)
                return;
        }
    if (count >= DTB_MAX_MOVES) {
        *status = DTB_E_OVERFLOW;
        return;
    }
    out->moves[count] = (dtb_move){.captured = captured, .from = (uint8_t)from, .to = (uint8_t)to,
                                   .ncaptured = (uint8_t)n, .promotes = promotes};
    out->count = count + 1;
}

/* A finished capture: listed, or in route mode compared with the target. */
static inline __attribute__((always_inline)) void add_capture(capture_search *cs, int to, dtb_bb captured, int n, bool promotes)
{
    if (cs->target) {
        const dtb_move *t = cs->target;
        if (to == t->to && captured == t->captured && promotes == t->promotes)
            cs->found = true;
        return;
    }
    list_capture(cs->out, &cs->first, &cs->best, cs->majority, &cs->status, cs->from, to,
                 captured, n, promotes);
}

static void king_jumps(capture_search *cs, int sq, dtb_bb captured, int n, bool promoted);

/* A man at sq that has taken `captured` (n pieces) so far. */
static void man_jumps(capture_search *cs, int sq, dtb_bb captured, int n)
{
    const dtb_board *b = cs->b;
    const dtb_bb prey = cs->prey & ~captured;
    bool more = false;
    for (int k = 0; k < cs->nman_dirs && !cs->found; k++) {
        const int d = cs->man_dirs[k];
        const int over = b->next[sq][d];
        if (over < 0 || !dtb_bb_has(prey, over))
            continue;
        const int land = b->next[over][d];
        if (land < 0 || !dtb_bb_has(cs->empty, land))
            continue;
        more = true;
        if (!dtb_bb_has(cs->allowed, over))
            continue;
        cs->path[n] = (uint8_t)land;
        const dtb_bb c2 = captured | dtb_bb_bit(over);
        if (cs->passing && dtb_bb_has(cs->far_row, land))
            king_jumps(cs, land, c2, n + 1, true);
        else
            man_jumps(cs, land, c2, n + 1);
    }
    if (!more && n > 0)
        add_capture(cs, sq, captured, n, dtb_bb_has(cs->far_row, sq));
}

/* The piece a king at sq meets first in direction d (the adjacent square for a short king, which
 * may be empty), -1 at the edge. Captured pieces still stand and block. */
static inline int king_meets(const capture_search *cs, int sq, int d)
{
    const dtb_board *b = cs->b;
    if (!cs->fly)
        return b->next[sq][d];
    return dtb_board_nearest(b->ray[sq][d] & ~cs->empty, d);
}

/* Whether a king at sq can jump a piece of prey in direction d. */
static inline bool king_jumps_dir(const capture_search *cs, int sq, dtb_bb prey, int d)
{
    const int over = king_meets(cs, sq, d);
    if (over < 0 || !dtb_bb_has(prey, over))
        return false;
    const int land = cs->b->next[over][d];
    return land >= 0 && dtb_bb_has(cs->empty, land);
}

/* Whether a king at sq, having taken `captured`, can jump once more. */
static bool king_can_jump(const capture_search *cs, int sq, dtb_bb captured)
{
    const dtb_bb prey = cs->prey & ~captured;
    for (int d = 0; d < DTB_DIRS; d++)
        if (king_jumps_dir(cs, sq, prey, d))
            return true;
    return false;
}

/* The king has taken the pieces c2 (its n + 1th jump) and may land on lands[0..nl): where some
 * landing square allows a further jump (go[], ngo of them) the sequence goes on from those only,
 * else it ends on any of them. */
static inline __attribute__((always_inline)) void land_king(capture_search *cs, const int *lands,
                                                            const bool *go, int nl, int ngo,
                                                            dtb_bb c2, int n, bool promoted)
{
    for (int i = 0; i < nl && !cs->found; i++) {
        if (ngo > 0 && !go[i])
            continue;
        cs->path[n] = (uint8_t)lands[i];
        if (ngo == 0)
            add_capture(cs, lands[i], c2, n + 1, promoted);
        else
            king_jumps(cs, lands[i], c2, n + 1, promoted);
    }
}

/* A king at sq (a man crowned in passing when `promoted`) that has taken `captured` so far.
 * The direction it came from needs no special case: the piece it just took blocks it.
 * A flying king that jumps a piece must land where it can go on capturing when such a landing
 * square exists (the sequence must be completed); only when none exists may it stop on any of
 * them. Under the majority rule this changes nothing, under free choice (russian) it does. */
static void king_jumps(capture_search *cs, int sq, dtb_bb captured, int n, bool promoted)
{
    const dtb_board *b = cs->b;
    const dtb_bb prey = cs->prey & ~captured;
    bool more = false;
    for (int d = 0; d < DTB_DIRS && !cs->found; d++) {
        const int over = king_meets(cs, sq, d);
        if (over < 0 || !dtb_bb_has(prey, over))
            continue;
        const int land0 = b->next[over][d];
        if (land0 < 0 || !dtb_bb_has(cs->empty, land0))
            continue;
        more = true;
        if (!dtb_bb_has(cs->allowed, over))
            continue;
        const dtb_bb c2 = captured | dtb_bb_bit(over);
        /* Landing squares: the empty run behind the piece, nearest first. */
        dtb_bb run = dtb_bb_bit(land0);
        if (cs->fly) {
            const int stop = dtb_board_nearest(b->ray[over][d] & ~cs->empty, d);
            run = b->ray[over][d] & ~(stop >= 0 ? b->ray[stop][d] | dtb_bb_bit(stop) : 0);
        }
        int lands[DTB_MAX_SQUARES / 4 + 2], nl = 0, ngo = 0;
        bool go[DTB_MAX_SQUARES / 4 + 2];
        if (cs->fly) {
            /* On every landing square of the run the piece just taken blocks the way back, and
             * the way on meets the same piece (the run's end): only the two other directions
             * differ from square to square. */
            const dtb_bb prey2 = prey & ~dtb_bb_bit(over);
            const int dl = (int)dtb_board_nearest(run, d ^ 3); /* the run's far end */
            const bool on = king_jumps_dir(cs, dl, prey2, d);
            while (run) {
                const int l = dtb_board_nearest(run, d);
                run &= ~dtb_bb_bit(l);
                go[nl] = on || king_jumps_dir(cs, l, prey2, d ^ 1) ||
                         king_jumps_dir(cs, l, prey2, d ^ 2);
                ngo += go[nl];
                lands[nl++] = l;
            }
        } else {
            while (run) {
                const int l = dtb_board_nearest(run, d);
                run &= ~dtb_bb_bit(l);
                go[nl] = king_can_jump(cs, l, c2);
                ngo += go[nl];
                lands[nl++] = l;
            }
        }
        land_king(cs, lands, go, nl, ngo, c2, n, promoted);
    }
    if (!more && n > 0)
        add_capture(cs, sq, captured, n, promoted);
}

/* ---- The list search in words (boards of up to 64 squares) -------------------------------- */

/* State of a listing capture search on words: capture_search without the route mode, so that
 * nothing in the hot loops tests for it. Lists the same moves in the same order. */
typedef struct search64 {
    const dtb_board *b;
    dtb_movelist *out;
    uint64_t empty;   /* where a piece may land: the empty squares plus the mover's start square */
    uint64_t prey;    /* opponent pieces (captured ones included: `captured` masks them out) */
    uint64_t far_row; /* the mover's promotion row */
    int from;
    int first;        /* first list entry of the current mover: duplicates can only be there */
    int best;         /* most pieces taken by a listed move (majority rule) */
    int man_lo, man_hi; /* men capture in the directions man_lo..man_hi */
    bool fly, majority, passing;
    dtb_status status;
} search64;

/* add_capture in words (listing only). */
static inline __attribute__((always_inline)) void add64(search64 *s, int to, uint64_t captured,
                                                        int n, bool promotes)
{
    list_capture(s->out, &s->first, &s->best, s->majority, &s->status, s->from, to,
                 (dtb_bb)captured, n, promotes);
}

/* The square of s (not empty) nearest to the start of a ray of direction d. */
static inline int nearest64(uint64_t s, int d)
{
    return d < DTB_SW ? 63 - __builtin_clzll(s) : __builtin_ctzll(s);
}

/* The square of the piece a flying king at sq meets first in direction d when it is one of prey,
 * else -1. */
static inline int prey_met64(const dtb_board *b, int sq, uint64_t prey, uint64_t empty, int d)
{
    const uint64_t met = (uint64_t)b->ray[sq][d] & ~empty;
    if (!met)
        return -1;
    const int over = nearest64(met, d);
    return (prey >> over) & 1 ? over : -1;
}

/* Whether a flying king at sq can jump a piece of prey in direction d. */
static inline bool jump64(const dtb_board *b, int sq, uint64_t prey, uint64_t empty, int d)
{
    const int over = prey_met64(b, sq, prey, empty, d);
    if (over < 0)
        return false;
    const int land = b->next[over][d];
    return land >= 0 && ((empty >> land) & 1);
}

static void king64(search64 *s, int sq, uint64_t captured, int n, bool promoted);
static void short_king64(search64 *s, int sq, uint64_t captured, int n, bool promoted);

/* Direction d of king64 (a compile-time constant once inlined): false when the king at sq has no
 * jump that way, else the sequences through that jump are searched. The landing squares are the
 * empty run behind the piece taken (over) up to the next piece (stop). On each of them the piece
 * just taken blocks the way back and the way on meets stop: only the two crossing directions
 * differ from square to square. Where some landing square allows a further jump the sequence
 * goes on from those only, else it ends on any of them (nearest first, as king_jumps). */
static inline __attribute__((always_inline)) bool king_dir64(search64 *s, int sq,
                                                             uint64_t captured, uint64_t prey,
                                                             int n, bool promoted, int d)
{
    const dtb_board *b = s->b;
    const uint64_t empty = s->empty;
    const int over = prey_met64(b, sq, prey, empty, d);
    if (over < 0)
        return false;
    const uint64_t behind = (uint64_t)b->ray[over][d], blocked = behind & ~empty;
    uint64_t run = behind;
    if (blocked) /* cut at stop: NW, NE keep the squares above it, SW, SE those below */
        run &= d < DTB_SW ? ~((2ull << (63 - __builtin_clzll(blocked))) - 1)
                          : (blocked & -blocked) - 1;
    if (!run) /* the square behind over is taken or off the board */
        return false;
    const uint64_t c2 = captured | 1ull << over, prey2 = prey & ~(1ull << over);
    bool on = false;
    if (blocked) {
        const int stop = nearest64(blocked, d);
        const int land = b->next[stop][d];
        on = ((prey2 >> stop) & 1) && land >= 0 && ((empty >> land) & 1);
    }
    if (!on) {
        uint64_t go = 0;
        for (uint64_t r = run; r; r &= r - 1) {
            const int l = __builtin_ctzll(r);
            if (jump64(b, l, prey2, empty, d ^ 1) || jump64(b, l, prey2, empty, d ^ 2))
                go |= 1ull << l;
        }
        if (!go) {
            while (run) {
                const int l = nearest64(run, d);
                run ^= 1ull << l;
                add64(s, l, c2, n + 1, promoted);
            }
            return true;
        }
        run = go;
    }
    while (run) {
        const int l = nearest64(run, d);
        run ^= 1ull << l;
        king64(s, l, c2, n + 1, promoted);
    }
    return true;
}

/* king_jumps for flying kings, listing only, in words. */
static void king64(search64 *s, int sq, uint64_t captured, int n, bool promoted)
{
    const uint64_t prey = s->prey & ~captured;
    bool more = king_dir64(s, sq, captured, prey, n, promoted, DTB_NW);
    more |= king_dir64(s, sq, captured, prey, n, promoted, DTB_NE);
    more |= king_dir64(s, sq, captured, prey, n, promoted, DTB_SW);
    more |= king_dir64(s, sq, captured, prey, n, promoted, DTB_SE);
    if (!more && n > 0)
        add64(s, sq, captured, n, promoted);
}

/* king_jumps for short kings, listing only, in words. A short king lands on one square only:
 * going on from it finds what king_jumps finds, the move ending there when it has no jump. */
static void short_king64(search64 *s, int sq, uint64_t captured, int n, bool promoted)
{
    const dtb_board *b = s->b;
    const uint64_t prey = s->prey & ~captured, empty = s->empty;
    bool more = false;
    for (int d = 0; d < DTB_DIRS; d++) {
        const int over = b->next[sq][d];
        if (over < 0 || !((prey >> over) & 1))
            continue;
        const int land = b->next[over][d];
        if (land < 0 || !((empty >> land) & 1))
            continue;
        more = true;
        short_king64(s, land, captured | 1ull << over, n + 1, promoted);
    }
    if (!more && n > 0)
        add64(s, sq, captured, n, promoted);
}

/* man_jumps, listing only, in words. */
static void man64(search64 *s, int sq, uint64_t captured, int n)
{
    const dtb_board *b = s->b;
    const uint64_t prey = s->prey & ~captured, empty = s->empty;
    bool more = false;
    for (int d = s->man_lo; d <= s->man_hi; d++) {
        const int over = b->next[sq][d];
        if (over < 0 || !((prey >> over) & 1))
            continue;
        const int land = b->next[over][d];
        if (land < 0 || !((empty >> land) & 1))
            continue;
        more = true;
        const uint64_t c2 = captured | 1ull << over;
        if (s->passing && ((s->far_row >> land) & 1)) {
            if (s->fly)
                king64(s, land, c2, n + 1, true);
            else
                short_king64(s, land, c2, n + 1, true);
        } else {
            man64(s, land, c2, n + 1);
        }
    }
    if (!more && n > 0)
        add64(s, sq, captured, n, (s->far_row >> sq) & 1);
}

/* generate_captures on words: men first, then kings, each in square order. */
static dtb_status generate_captures64(const dtb_board *b, const dtb_pos *p, uint64_t men,
                                      bool king_can, dtb_movelist *out)
{
    const dtb_variant *v = b->variant;
    const dtb_color side = p->side;
    search64 s;
    s.b = b;
    s.out = out;
    s.prey = (uint64_t)dtb_pos_pieces(p, (dtb_color)(side ^ 1));
    s.far_row = (uint64_t)b->promotion[side];
    s.first = s.best = 0;
    s.man_lo = v->men_capture_backward ? 0 : 2 * (int)side;
    s.man_hi = v->men_capture_backward ? DTB_DIRS - 1 : 2 * (int)side + 1;
    s.fly = v->kings_fly;
    s.majority = v->majority_capture;
    s.passing = v->promote_in_passing;
    s.status = DTB_OK;
    const uint64_t empty = (uint64_t)b->all & ~(uint64_t)dtb_pos_occupied(p);
    uint64_t k = king_can ? (uint64_t)p->kings[side] : 0;
    while (men && s.status == DTB_OK) {
        const int from = __builtin_ctzll(men);
        men &= men - 1;
        s.from = from;
        s.first = out->count;
        s.empty = empty | 1ull << from;
        man64(&s, from, 0, 0);
    }
    while (k && s.status == DTB_OK) {
        const int from = __builtin_ctzll(k);
        k &= k - 1;
        s.from = from;
        s.first = out->count;
        s.empty = empty | 1ull << from;
        if (s.fly)
            king64(&s, from, 0, 0, false);
        else
            short_king64(&s, from, 0, 0, false);
    }
    return s.status;
}

/* Field by field: path[] needs no clearing (the generator never reads it). */
static inline void search_init(capture_search *cs, const dtb_board *b, const dtb_pos *p)
{
    const dtb_variant *v = b->variant;
    const dtb_color side = p->side;
    cs->b = b;
    cs->out = NULL;
    cs->empty = 0;
    cs->prey = dtb_pos_pieces(p, (dtb_color)(side ^ 1));
    cs->allowed = ~(dtb_bb)0;
    cs->far_row = b->promotion[side];
    cs->from = cs->first = cs->best = 0;
    cs->fly = v->kings_fly;
    cs->majority = v->majority_capture;
    cs->passing = v->promote_in_passing;
    cs->nman_dirs = 0;
    cs->status = DTB_OK;
    cs->target = NULL;
    cs->found = false;
    for (int d = 0; d < DTB_DIRS; d++)
        if (v->men_capture_backward || is_forward(side, d))
            cs->man_dirs[cs->nman_dirs++] = d;
}

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* dtb_board_step with constant shifts. In the dense layout a step's shift depends only on the
 * direction, the row parity and the row length `half` (see board.c); the set-wise functions below
 * are instantiated per board size so that each step compiles to two immediate shifts. */
ALWAYS_INLINE dtb_bb step(const dtb_board *b, dtb_bb s, int d, int half)
{
    static const int base[DTB_DIRS][2] = {{0, -1}, {1, 0}, {0, -1}, {1, 0}};
    const int sign = d < 2 ? -1 : 1;
    const int s0 = sign * half + base[d][0], s1 = sign * half + base[d][1];
    if (half <= 5) { /* at most 50 squares: the high word stays zero; let the compiler see it */
        const uint64_t x = (uint64_t)s;
        const uint64_t m0 = (uint64_t)b->step_from[d][0], m1 = (uint64_t)b->step_from[d][1];
        return (dtb_bb)((s0 >= 0 ? (x & m0) << s0 : (x & m0) >> -s0) |
                        (s1 >= 0 ? (x & m1) << s1 : (x & m1) >> -s1));
    }
    return dtb_bb_shift(s & b->step_from[d][0], s0) | dtb_bb_shift(s & b->step_from[d][1], s1);
}

/* step for boards of at most 64 squares (half <= 5), in words. */
ALWAYS_INLINE uint64_t step64(const dtb_board *b, uint64_t s, int d, int half)
{
    return (uint64_t)step(b, s, d, half);
}

/* capturing_men for boards of at most 64 squares (half <= 5), in words throughout: the capture
 * test of every position the solver meets, most of which have no capture. */
ALWAYS_INLINE uint64_t capturing_men64_t(const dtb_board *b, const dtb_pos *p, bool *king_can,
                                         int half, bool backward, bool fly)
{
    const dtb_color side = p->side;
    const uint64_t opp = (uint64_t)p->men[side ^ 1] | (uint64_t)p->kings[side ^ 1];
    const uint64_t men = (uint64_t)p->men[side];
    uint64_t kings = (uint64_t)p->kings[side];
    const uint64_t occ = opp | men | kings;
    const uint64_t empty = (uint64_t)b->all & ~occ;
    uint64_t men_out = 0, jumpable[DTB_DIRS];
    bool kc = false;
#pragma GCC unroll 4
    for (int d = 0; d < DTB_DIRS; d++) {
        jumpable[d] = step64(b, empty, d ^ 3, half) & opp;
        const uint64_t starts = step64(b, jumpable[d], d ^ 3, half);
        if (backward || is_forward(side, d))
            men_out |= men & starts;
        if (!fly)
            kc |= (kings & starts) != 0;
    }
    if (fly) {
        /* As flying_king_can_capture. */
        while (kings && !kc) {
            const int k = __builtin_ctzll(kings);
            kings &= kings - 1;
            const uint64_t m0 = (uint64_t)b->ray[k][DTB_NW] & occ, m1 = (uint64_t)b->ray[k][DTB_NE] & occ;
            const uint64_t m2 = (uint64_t)b->ray[k][DTB_SW] & occ, m3 = (uint64_t)b->ray[k][DTB_SE] & occ;
            const uint64_t j0 = jumpable[DTB_NW], j1 = jumpable[DTB_NE];
            const uint64_t j2 = jumpable[DTB_SW], j3 = jumpable[DTB_SE];
            kc = ((m0 & j0) > (m0 & ~j0)) | ((m1 & j1) > (m1 & ~j1)) | ((m2 & -m2 & j2) != 0) |
                 ((m3 & -m3 & j3) != 0);
        }
    }
    *king_can = kc;
    return men_out;
}

/* Whether one of the flying kings can take a piece of opp. jumpable[d]: the pieces of opp with
 * an empty square behind them in direction d. Along a ray the first piece met must be one of
 * those; the nearest piece of a ray's set m is its highest square for NW and NE (then it is in a
 * subset J exactly when m & J > m & ~J as numbers) and its lowest for SW and SE. */
ALWAYS_INLINE bool flying_king_can_capture(const dtb_board *b, dtb_bb kings, dtb_bb occ,
                                           const dtb_bb jumpable[DTB_DIRS], int half)
{
    while (kings) {
        const int k = dtb_bb_pop(&kings);
        if (half <= 5) { /* at most 50 squares: words */
            const uint64_t o = (uint64_t)occ;
            const uint64_t m0 = (uint64_t)b->ray[k][DTB_NW] & o, m1 = (uint64_t)b->ray[k][DTB_NE] & o;
            const uint64_t m2 = (uint64_t)b->ray[k][DTB_SW] & o, m3 = (uint64_t)b->ray[k][DTB_SE] & o;
            const uint64_t j0 = (uint64_t)jumpable[DTB_NW], j1 = (uint64_t)jumpable[DTB_NE];
            const uint64_t j2 = (uint64_t)jumpable[DTB_SW], j3 = (uint64_t)jumpable[DTB_SE];
            if (((m0 & j0) > (m0 & ~j0)) | ((m1 & j1) > (m1 & ~j1)) | ((m2 & -m2 & j2) != 0) |
                ((m3 & -m3 & j3) != 0))
                return true;
        } else { /* the same in two words, without a branch per direction */
            const dtb_bb m0 = b->ray[k][DTB_NW] & occ, m1 = b->ray[k][DTB_NE] & occ;
            const dtb_bb m2 = b->ray[k][DTB_SW] & occ, m3 = b->ray[k][DTB_SE] & occ;
            const dtb_bb j0 = jumpable[DTB_NW], j1 = jumpable[DTB_NE];
            const dtb_bb j2 = jumpable[DTB_SW], j3 = jumpable[DTB_SE];
            if (((m0 & j0) > (m0 & ~j0)) | ((m1 & j1) > (m1 & ~j1)) | ((m2 & -m2 & j2) != 0) |
                ((m3 & -m3 & j3) != 0))
                return true;
        }
    }
    return false;
}

/* Men of the side to move that have a capture, and whether some king has one. */
ALWAYS_INLINE dtb_bb capturing_men(const dtb_board *b, const dtb_pos *p, dtb_bb empty,
                                   bool *king_can, int half)
{
    const dtb_variant *v = b->variant;
    const dtb_color side = p->side;
    const dtb_bb opp = dtb_pos_pieces(p, (dtb_color)(side ^ 1));
    const dtb_bb men = p->men[side], kings = p->kings[side];
    dtb_bb men_out = 0, jumpable[DTB_DIRS];
    bool kc = false;
#pragma GCC unroll 4
    for (int d = 0; d < DTB_DIRS; d++) {
        jumpable[d] = step(b, empty, d ^ 3, half) & opp;
        const dtb_bb starts = step(b, jumpable[d], d ^ 3, half);
        if (v->men_capture_backward || is_forward(side, d))
            men_out |= men & starts;
        if (!v->kings_fly)
            kc |= (kings & starts) != 0;
    }
    if (v->kings_fly)
        kc = flying_king_can_capture(b, kings, b->all & ~empty, jumpable, half);
    *king_can = kc;
    return men_out;
}

/* capturing_men64 with the rules of international, brazilian and russian draughts (men capture
 * backwards, kings fly) compiled in, the others read at run time. */
ALWAYS_INLINE uint64_t capturing_men64(const dtb_board *b, const dtb_pos *p, bool *king_can,
                                       int half)
{
    const dtb_variant *v = b->variant;
    if (v->men_capture_backward && v->kings_fly)
        return capturing_men64_t(b, p, king_can, half, true, true);
    return capturing_men64_t(b, p, king_can, half, v->men_capture_backward, v->kings_fly);
}

static dtb_status add_quiet(dtb_movelist *out, int from, int to, bool promotes)
{
    if (out->count >= DTB_MAX_MOVES)
        return DTB_E_OVERFLOW;
    out->moves[out->count++] =
        (dtb_move){.from = (uint8_t)from, .to = (uint8_t)to, .promotes = promotes};
    return DTB_OK;
}

ALWAYS_INLINE dtb_status generate_quiet(const dtb_board *b, const dtb_pos *p, dtb_bb empty,
                                        dtb_movelist *out, int half)
{
    const dtb_color side = p->side;
    dtb_status st = DTB_OK;
    for (int k = 0; k < 2; k++) {
        const int d = dtb_forward_dir(side, k);
        dtb_bb to = (side == DTB_WHITE ? step(b, p->men[side], k, half)
                                       : step(b, p->men[side], 2 + k, half)) & empty;
        if (out->count + dtb_bb_count(to) > DTB_MAX_MOVES)
            return DTB_E_OVERFLOW;
        while (to) {
            const int t = dtb_bb_pop(&to);
            out->moves[out->count++] =
                (dtb_move){.from = (uint8_t)b->next[t][d ^ 3], .to = (uint8_t)t,
                           .promotes = dtb_bb_has(b->promotion[side], t)};
        }
    }
    dtb_bb kings = p->kings[side];
    while (kings && st == DTB_OK) {
        const int from = dtb_bb_pop(&kings);
        for (int d = 0; d < DTB_DIRS && st == DTB_OK; d++)
            for (int t = b->next[from][d]; t >= 0 && dtb_bb_has(empty, t) && st == DTB_OK;
                 t = b->variant->kings_fly ? b->next[t][d] : -1)
                st = add_quiet(out, from, t, false);
    }
    return st;
}

/* Every capture of p into out (emptied first): a search from each man of `men` and, when
 * king_can, from each king. Out of line: it does not depend on the board size. */
static __attribute__((noinline)) dtb_status generate_captures(const dtb_board *b, const dtb_pos *p,
                                                              dtb_bb men, bool king_can,
                                                              dtb_movelist *out)
{
    out->count = 0;
    if (b->squares <= 64)
        return generate_captures64(b, p, (uint64_t)men, king_can, out);
    capture_search cs;
    search_init(&cs, b, p);
    cs.out = out;
    const dtb_bb empty = b->all & ~dtb_pos_occupied(p);
    while (men && cs.status == DTB_OK) {
        const int from = dtb_bb_pop(&men);
        cs.from = from;
        cs.first = out->count;
        cs.empty = empty | dtb_bb_bit(from);
        man_jumps(&cs, from, 0, 0);
    }
    dtb_bb kings = king_can ? p->kings[p->side] : 0;
    while (kings && cs.status == DTB_OK) {
        const int from = dtb_bb_pop(&kings);
        cs.from = from;
        cs.first = out->count;
        cs.empty = empty | dtb_bb_bit(from);
        king_jumps(&cs, from, 0, 0, false);
    }
    return cs.status;
}

/* The captures of p, or an empty list when it has none. */
ALWAYS_INLINE dtb_status captures_only(const dtb_board *b, const dtb_pos *p, dtb_movelist *out,
                                       int half)
{
    bool king_can;
    const dtb_bb men = half <= 5 ? capturing_men64(b, p, &king_can, half)
                                 : capturing_men(b, p, b->all & ~dtb_pos_occupied(p), &king_can, half);
    if (men || king_can)
        return generate_captures(b, p, men, king_can, out);
    out->count = 0;
    return DTB_OK;
}

ALWAYS_INLINE dtb_status generate(const dtb_board *b, const dtb_pos *p, dtb_movelist *out,
                                  int half)
{
    const dtb_status st = captures_only(b, p, out, half);
    if (st != DTB_OK || out->count)
        return st;
    return generate_quiet(b, p, b->all & ~dtb_pos_occupied(p), out, half);
}

/* count_king_moves for flying kings on boards of at most 63 squares, king by king: in each
 * direction the empty run up to the nearest piece, cut from the ray mask. SW and SE rays grow
 * in square order (nearest piece: the lowest bit of m, the run below it); NW and NE shrink
 * (nearest: the highest bit, the run above it), done one square up with a stop bit at 0 so
 * that an empty m needs no branch. */
ALWAYS_INLINE int count_flying64(const dtb_board *b, uint64_t kings, uint64_t empty)
{
    const uint64_t occ = (uint64_t)b->all & ~empty;
    int n = 0;
    while (kings) {
        const int k = __builtin_ctzll(kings);
        kings &= kings - 1;
#pragma GCC unroll 2
        for (int d = DTB_NW; d <= DTB_NE; d++) {
            const uint64_t r = (uint64_t)b->ray[k][d] << 1, m = ((uint64_t)b->ray[k][d] & occ) << 1 | 1;
            const uint64_t top = 1ull << (63 - __builtin_clzll(m));
            n += __builtin_popcountll(r & ~((top << 1) - 1));
        }
#pragma GCC unroll 2
        for (int d = DTB_SW; d <= DTB_SE; d++) {
            const uint64_t r = (uint64_t)b->ray[k][d], m = r & occ;
            n += __builtin_popcountll(r & ((m & -m) - 1));
        }
    }
    return n;
}

/* count_flying64 in two words, for boards of more than 63 squares (the stop bit needs the room
 * above the top square that 128 bits leave): the 12x12 board, where stepping a king set square
 * by square along 11-square diagonals was the solver's largest single cost. */
ALWAYS_INLINE int count_flying_wide(const dtb_board *b, dtb_bb kings, dtb_bb empty)
{
    const dtb_bb occ = b->all & ~empty;
    int n = 0;
    while (kings) {
        const int k = dtb_bb_pop(&kings);
#pragma GCC unroll 2
        for (int d = DTB_NW; d <= DTB_NE; d++) {
            const dtb_bb r = b->ray[k][d] << 1, m = (b->ray[k][d] & occ) << 1 | 1;
            const dtb_bb top = dtb_bb_bit(dtb_bb_highest(m));
            n += dtb_bb_count(r & ~((top << 1) - 1));
        }
#pragma GCC unroll 2
        for (int d = DTB_SW; d <= DTB_SE; d++) {
            const dtb_bb r = b->ray[k][d], m = r & occ;
            n += dtb_bb_count(r & ((m & -m) - 1));
        }
    }
    return n;
}

ALWAYS_INLINE int count_king_moves(const dtb_board *b, dtb_bb kings, dtb_bb empty, int half)
{
    const bool fly = b->variant->kings_fly;
    if (fly && half <= 5)
        return count_flying64(b, (uint64_t)kings, (uint64_t)empty);
    if (fly && half == 6)
        return count_flying_wide(b, kings, empty);
    int n = 0;
#pragma GCC unroll 4
    for (int d = 0; d < DTB_DIRS; d++)
        for (dtb_bb f = kings; (f = step(b, f, d, half) & empty);) {
            n += dtb_bb_count(f);
            if (!fly)
                break;
        }
    return n;
}

/* Captures must be listed to merge equal moves. */
static __attribute__((noinline)) int count_captures(const dtb_board *b, const dtb_pos *p,
                                                    dtb_bb men, bool king_can)
{
    dtb_movelist list;
    const dtb_status st = generate_captures(b, p, men, king_can, &list);
    assert(st == DTB_OK);
    (void)st;
    return list.count;
}

/* Without a capture the count is a sum of popcounts. Capture detection and the men's count share
 * the empty squares stepped backwards (a man has a quiet move in direction d exactly when it
 * stands on step(empty, d^3)); kings slide set-wise (two kings moving the same way never reach
 * the same square, since the rear one is blocked by the front one). */
ALWAYS_INLINE int count_moves(const dtb_board *b, const dtb_pos *p, int half)
{
    const dtb_variant *v = b->variant;
    const dtb_color side = p->side;
    const dtb_bb empty = b->all & ~dtb_pos_occupied(p);
    const dtb_bb opp = dtb_pos_pieces(p, (dtb_color)(side ^ 1));
    const dtb_bb men = p->men[side], kings = p->kings[side];
    dtb_bb back[DTB_DIRS], starts[DTB_DIRS];
    dtb_bb jumpers = 0;
#pragma GCC unroll 4
    for (int d = 0; d < DTB_DIRS; d++) {
        back[d] = step(b, empty, d ^ 3, half);
        starts[d] = step(b, back[d] & opp, d ^ 3, half);
        if (v->men_capture_backward || is_forward(side, d))
            jumpers |= starts[d];
    }
    jumpers &= men;
    bool king_can = false;
    if (kings) {
        if (v->kings_fly) {
#pragma GCC unroll 4
            for (int d = 0; d < DTB_DIRS; d++) {
                dtb_bb f = kings;
                while (f && !(f & starts[d]))
                    f = step(b, f, d, half) & empty;
                king_can |= f != 0;
            }
        } else {
            king_can = ((starts[0] | starts[1] | starts[2] | starts[3]) & kings) != 0;
        }
    }
    if (jumpers || king_can)
        return count_captures(b, p, jumpers, king_can);
    int n = side == DTB_WHITE ? dtb_bb_count(men & back[DTB_NW]) + dtb_bb_count(men & back[DTB_NE])
                              : dtb_bb_count(men & back[DTB_SW]) + dtb_bb_count(men & back[DTB_SE]);
    if (kings)
        n += count_king_moves(b, kings, empty, half);
    return n;
}

ALWAYS_INLINE bool has_capture(const dtb_board *b, const dtb_pos *p, int half)
{
    bool king_can;
    if (half <= 5)
        return capturing_men64(b, p, &king_can, half) != 0 || king_can;
    const dtb_bb empty = b->all & ~dtb_pos_occupied(p);
    return capturing_men(b, p, empty, &king_can, half) != 0 || king_can;
}

/* The 8x8, 10x10 and 12x12 instances; another size falls back to a run-time row length. */
#define DISPATCH(call)                                                                          \
    switch (b->half) {                                                                          \
    case 4: return call(4);                                                                     \
    case 5: return call(5);                                                                     \
    case 6: return call(6);                                                                     \
    default: return call(b->half);                                                              \
    }

dtb_status dtb_generate(const dtb_board *b, const dtb_pos *p, dtb_movelist *out)
{
#define CALL(h) generate(b, p, out, h)
    DISPATCH(CALL)
#undef CALL
}

int dtb_count_moves(const dtb_board *b, const dtb_pos *p)
{
#define CALL(h) count_moves(b, p, h)
    DISPATCH(CALL)
#undef CALL
}

/* One out-of-line instance per board size, so that each loads only what it uses (inlined into
 * one switch, the loads of all cases were hoisted in front of it). */
#define CAPTURES_ONLY(NAME, H)                                                                  \
    static __attribute__((noinline)) dtb_status NAME(const dtb_board *b, const dtb_pos *p,     \
                                                     dtb_movelist *out)                        \
    {                                                                                          \
        return captures_only(b, p, out, H);                                                    \
    }
CAPTURES_ONLY(captures_only4, 4)
CAPTURES_ONLY(captures_only5, 5)
CAPTURES_ONLY(captures_only6, 6)
CAPTURES_ONLY(captures_only_any, b->half)
#undef CAPTURES_ONLY

dtb_status dtb_generate_captures(const dtb_board *b, const dtb_pos *p, dtb_movelist *out)
{
    switch (b->half) {
    case 4: return captures_only4(b, p, out);
    case 5: return captures_only5(b, p, out);
    case 6: return captures_only6(b, p, out);
    default: return captures_only_any(b, p, out);
    }
}

dtb_status dtb_generate_captures_by(const dtb_board *b, const dtb_pos *p, dtb_bb men,
                                    bool king_can, dtb_movelist *out)
{
    men &= p->men[p->side];
    if (!men && !king_can) {
        out->count = 0;
        return DTB_OK;
    }
    return generate_captures(b, p, men, king_can, out);
}

bool dtb_has_capture(const dtb_board *b, const dtb_pos *p)
{
#define CALL(h) has_capture(b, p, h)
    DISPATCH(CALL)
#undef CALL
}

int dtb_count_king_steps(const dtb_board *b, dtb_bb kings, dtb_bb empty)
{
#define CALL(h) count_king_moves(b, kings, empty, h)
    DISPATCH(CALL)
#undef CALL
}

/* Re-runs the capture search of the piece on m->from, jumping only pieces of m->captured, until
 * a complete sequence ends like m. Returns the number of landings (which may exceed cap: only the
 * first cap are written, as with snprintf), or -1 for a quiet move or a move no route realises. */
int dtb_capture_route(const dtb_board *b, const dtb_pos *p, const dtb_move *m, uint8_t *path,
                      int cap)
{
    const dtb_color side = p->side;
    if (m->ncaptured == 0 || !dtb_bb_has(dtb_pos_pieces(p, side), m->from))
        return -1;
    capture_search cs;
    search_init(&cs, b, p);
    cs.target = m;
    cs.allowed = m->captured;
    cs.from = m->from;
    cs.empty = (b->all & ~dtb_pos_occupied(p)) | dtb_bb_bit(m->from);
    if (dtb_bb_has(p->kings[side], m->from))
        king_jumps(&cs, m->from, 0, 0, false);
    else
        man_jumps(&cs, m->from, 0, 0);
    if (!cs.found)
        return -1;
    const int n = dtb_bb_count(m->captured);
    for (int i = 0; i < n && i < cap; i++)
        path[i] = cs.path[i];
    return n;
}
