/* The node solve: retrograde analysis with successor counters, one unit at a time (units:
 * gen/solve_unit.h). Units of equal advancement are solved in parallel, each by one thread, so
 * the result does not depend on the thread count; a large unit is shared by all threads.
 *
 * Inside a unit, positions are resolved level by level (level = DTW in plies), like a
 * breadth-first search from the ends of the game:
 *   - win at d: some successor is a loss at d-1 (the first such level is the DTW);
 *   - loss at d: every successor is a win, the longest at d-1;
 *   - whatever is never resolved is a draw.
 * Exits are known from the start; in-unit successors report back when they resolve, through
 * predecessor generation (un-moving a king) and a counter of unresolved successors. */
#include "solve_unit.h"

static void add_exit(batch *bt, const dtb_value *v)
{
    __builtin_prefetch(v);
    bt->exit[bt->nexit++] = v;
}

/* Records what the gathered positions' moves tell: folds exit values into wincand / lossmax /
 * draw flag, and queues a position when it is already decided. Writes only the nodes of the
 * batch's positions, so positions can be initialised in parallel. */
static void flush_batch(const unit *u, lane *ln, batch *bt)
{
    for (int k = 0; k < bt->npos; k++) {
        const uint32_t id = bt->pos[k].id;
        const bool capture = bt->pos[k].capture;
        const int cnt = bt->pos[k].cnt;
        int wincand, lossmax;
        bool drawexit;
        fold_exits(u->s, &bt->exit[bt->pos[k].first], bt->pos[k].n, &wincand, &lossmax, &drawexit);
        if (wincand != NO_WIN_YET && wincand > DTB_MAX_DTW)
            ln->overflow = true;
        u->n[id] = (node){.cnt = (unsigned)cnt,
                          .wincand = (unsigned)(wincand > DTB_MAX_DTW ? NO_WIN : wincand),
                          .lossmax = (unsigned)(lossmax + 1),
                          .flags = (unsigned)((capture ? F_CAPTURE : 0) | (drawexit ? F_DRAWEXIT : 0))};
        if (capture) {
            const int h = half_of(u, id);
            capture_bits_set(&ln->capbits, u->h[h].t->captures, u->h[h].base + in_half(u, id));
        }
        if (wincand != NO_WIN_YET)
            dtb_unit_push(ln, wincand, id);
        else if (cnt == 0 && !drawexit)
            dtb_unit_push(ln, lossmax + 1, id);
    }
    bt->npos = bt->nexit = 0;
}

/* Gathers what the moves of p (local id) lead to: counts in-unit successors (quiet king moves)
 * and lists where the exits' values are. Quiet positions (the most) skip the move list: king
 * moves are only counted, man moves made directly. */
static void init_position(const unit *u, lane *ln, batch *bt, uint32_t id, const dtb_pos *restrict p)
{
    const dtb_board *b = u->b;
    int cnt = 0;
    dtb_movelist ml;
    const half *hf = &u->h[half_of(u, id)];
    dtb_status st = DTB_OK;
    bool king_takes_lone = false; /* a king can capture black's only piece: no list needed */
    ml.count = 0;
    if (u->quick_capture) {
        dtb_bb men;
        const bool kc = b->squares > 64
                            ? may_capture_wide(b, hf, p->kings[DTB_WHITE], p->kings[DTB_BLACK], &men)
                            : may_capture(b, hf, (uint64_t)p->kings[DTB_WHITE], (uint64_t)p->kings[DTB_BLACK], &men);
        king_takes_lone = kc && hf->lone;
        if (!king_takes_lone)
            st = dtb_generate_captures_by(b, p, men, kc, &ml);
    } else {
        st = dtb_generate_captures(b, p, &ml);
    }
    assert(st == DTB_OK);
    (void)st;
    const bool capture = king_takes_lone || ml.count > 0;
    int first;
    if (capture) {
        if (bt->nexit + ml.count > EXITS_CAP)
            flush_batch(u, ln, bt);
        first = bt->nexit;
        if (hf->lone) { /* every capture takes black's last piece: a win in 1, whichever */
            static const dtb_value no_piece_left = DTB_VALUE_LOST;
            add_exit(bt, &no_piece_left);
        } else {
            for (int i = 0; i < ml.count; i++)
                add_exit(bt, dtb_solved_value_after(u->s, p, &ml.moves[i], &bt->slot[bt->nexit]));
        }
    } else {
        if (bt->nexit + QUIET_EXITS_MAX > EXITS_CAP)
            flush_batch(u, ln, bt);
        first = bt->nexit;
        const dtb_bb empty = b->all & ~dtb_pos_occupied(p);
        if (u->quick_capture && b->squares <= 64) { /* words, inline: a king's reach is a few masked rays */
            const uint64_t occ = (uint64_t)b->all & ~(uint64_t)empty;
            for (uint64_t k = (uint64_t)p->kings[DTB_WHITE]; k; k &= k - 1)
                cnt += __builtin_popcountll(king_reach64(b, __builtin_ctzll(k), occ, true));
        } else {
            cnt = dtb_count_king_steps(b, p->kings[DTB_WHITE], empty);
        }
        if (hf->nex && hf->exf) { /* in words: the kings as the flipped target blocks see them */
            const dtb_index_fast *f = hf->exf;
            const int shift = 64 - b->squares;
            const uint64_t fwk = dtb_reverse64((uint64_t)p->kings[DTB_BLACK]) >> shift;
            const uint64_t fbk = dtb_reverse64((uint64_t)p->kings[DTB_WHITE]) >> shift;
            const uint64_t empty64 = (uint64_t)empty;
            for (int i = 0; i < hf->nex; i++) {
                const man_exit *x = &hf->ex[i];
                if (!((uint64_t)x->to & empty64))
                    continue;
                const uint64_t r = dtb_index_rank64_(fwk, f->wk, x->free) * f->nbk_count +
                                   dtb_index_rank64_(fbk, f->bk, x->free & ~fwk);
                add_exit(bt, &x->values[x->base + r]);
            }
        } else if (hf->nex) { /* kings as the flipped target blocks see them */
            const dtb_bb fwk = dtb_bb_reverse(b, p->kings[DTB_BLACK]);
            const dtb_bb fbk = dtb_bb_reverse(b, p->kings[DTB_WHITE]);
            for (int i = 0; i < hf->nex; i++) {
                const man_exit *x = &hf->ex[i];
                if (!(x->to & empty))
                    continue;
                const uint64_t r = dtb_index_kings_of(x->ix, x->men, fwk, fbk);
                add_exit(bt, &x->values[x->base + r]);
            }
        }
        for (int k = 0; k < 2; k++) {
            const int d = dtb_forward_dir(DTB_WHITE, k);
            dtb_bb to = hf->promo_to[k] & empty;
            while (to) { /* a promotion (only promoting men step here) */
                const int t = dtb_bb_pop(&to);
                assert(dtb_bb_has(b->promotion[DTB_WHITE], t));
                const dtb_move mv = {.from = (uint8_t)b->next[t][d ^ 3], .to = (uint8_t)t,
                                     .promotes = true};
                add_exit(bt, dtb_solved_value_after(u->s, p, &mv, &bt->slot[bt->nexit]));
            }
        }
        assert(bt->nexit - first <= QUIET_EXITS_MAX);
    }
    assert(cnt <= 255);
    bt->pos[bt->npos].id = id;
    bt->pos[bt->npos].first = (uint16_t)first;
    bt->pos[bt->npos].n = (uint16_t)(bt->nexit - first);
    bt->pos[bt->npos].cnt = (uint8_t)cnt;
    bt->pos[bt->npos].capture = capture;
    if (++bt->npos == BATCH)
        flush_batch(u, ln, bt);
}

/* Initialises positions from..to-1 of the unit. */
static void init_range(const unit *u, lane *ln, uint32_t from, uint32_t to)
{
    dtb_pos p;
    for (uint32_t id = from; id < to; id++) {
        /* The kings step to the next rank, except at the start and where a half begins. */
        if (id == from || id == 0 || id == u->K) {
            dtb_unit_local_pos(u, id, &p);
        } else {
            next_kings(u, half_of(u, id), &p);
        }
        init_position(u, ln, &ln->bt, id, &p);
    }
    flush_batch(u, ln, &ln->bt);
    capture_bits_flush(&ln->capbits);
}

/* Stores a win or loss at d for local id; false when its long-list entry could not be stored. */
static bool set_value(const unit *u, uint64_t id, bool win, int d)
{
    const int h = half_of(u, id);
    const uint64_t i = u->h[h].base + in_half(u, id);
    if (d <= u->byte_limit[win]) { /* the byte holds it: no call per resolved position */
        u->h[h].t->values[i] = win ? dtb_value_win(d) : dtb_value_loss(d);
        return true;
    }
    return dtb_solved_store(u->s, u->h[h].t, i, win, d);
}

/* A successor of the node resolved as a win (for its side) at level d: one move fewer to hear
 * from, and the longest such win so far. Returns the level to queue the node at (a loss), -1 if
 * none. Branch-free up to that rare queueing: half or more of these facts reach nodes that do
 * not listen (capture positions and resolved ones) in no predictable pattern, so a branch on
 * it would often be mispredicted. */
static inline int learn_win(node *nd, int d)
{
    const node o = *nd;
    const unsigned live = !(o.flags & F_DEAF), all = 0u - live;
    assert(!live || o.cnt > 0);
    const unsigned lm = o.lossmax;
    const unsigned longer = (unsigned)d + 1 > lm ? (unsigned)d + 1 : lm;
    node w = o; /* o itself when the node does not listen: selects by mask, not by branch */
    w.cnt = (o.cnt - live) & 255u;
    w.lossmax = (lm + ((longer - lm) & all)) & 1023u;
    *nd = w;
    /* a loss now: listening, no move left unheard, no win known, no drawing exit */
    const bool lost = (w.cnt | (w.flags & (F_DEAF | F_DRAWEXIT)) | (w.wincand ^ NO_WIN)) == 0;
    return lost ? (int)w.lossmax : -1; /* lossmax is biased by one */
}

/* A successor resolved as a loss at level d: a win at d+1 unless one as short is known.
 * Returns the level to queue the node at, -1 if none. */
static inline int learn_loss(node *nd, int d)
{
    if ((nd->flags & F_DEAF) || d + 1 >= (int)nd->wincand)
        return -1;
    nd->wincand = (unsigned)(d + 1 > DTB_MAX_DTW ? NO_WIN : d + 1);
    return d + 1;
}

/* What a successor resolved at level d (a win for its side when is_win) tells the node. */
static inline int learn(node *nd, int d, bool is_win)
{
    return is_win ? learn_win(nd, d) : learn_loss(nd, d);
}

/* Tells the in-unit predecessors pids[0..np) of a position resolved at level d (win or loss)
 * about it, at once (their nodes prefetched by the caller). The result does not depend on the
 * order in which resolved positions are propagated: a node's fate depends only on the set of
 * facts it learns, and every fact of level d is learnt before level d+1 starts. */
static void propagate(const unit *u, lane *ln, const uint64_t *pids, int np, int d, bool is_win)
{
    node *const n = u->n;
    for (int i = 0; i < np; i++) {
        const int level = learn(&n[pids[i]], d, is_win);
        if (level >= 0)
            dtb_unit_push(ln, level, (uint32_t)pids[i]);
    }
}

static void note_result(const unit *u, lane *ln, uint32_t id, dtb_wvalue v)
{
    const int h = half_of(u, id);
    dtb_unit_count_result(&ln->st[u->h[h].slot], u->h[h].base + in_half(u, id), v);
}

/* Marks a queued id resolved at level d and sets its value; *win tells how. A node can be
 * queued twice (as a loss, then as an earlier win); only the first visit counts: false on the
 * second. */
static bool mark_resolved(const unit *u, lane *ln, uint32_t id, int d, bool *win)
{
    node *nd = &u->n[id], old;
    if (u->shared) { /* other threads may take the same id from their queue */
        node nw;
        __atomic_load(nd, &old, __ATOMIC_RELAXED);
        do {
            if (old.flags & F_RESOLVED)
                return false;
            nw = old;
            nw.flags |= F_RESOLVED;
        } while (!__atomic_compare_exchange(nd, &old, &nw, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    } else {
        old = *nd;
        if (old.flags & F_RESOLVED)
            return false;
        nd->flags |= F_RESOLVED;
    }
    *win = (int)old.wincand == d;
    assert(*win || old.cnt == 0 || (old.flags & F_CAPTURE));
    if (!set_value(u, id, *win, d))
        ln->nomem = true;
    note_result(u, ln, id, dtb_wvalue_of(*win, d));
    return true;
}

/* Fetches what mark_resolved will touch for id: its node and its value byte (in a unit's
 * queue order both are far apart). */
static inline void prefetch_resolved(const unit *u, uint32_t id)
{
    const half *hf = &u->h[half_of(u, id)];
    __builtin_prefetch(&u->n[id], 1);
    __builtin_prefetch(&hf->t->values[hf->base + in_half(u, id)], 1);
}

/* Resolves the queue's entries from..to-1 (level d) and propagates them, one entry behind: the
 * predecessors of an entry are found and their nodes prefetched before the previous entry's
 * are updated, so the nodes (far apart in a large unit) arrive while there is work to do. */
static void resolve_bucket(const unit *u, lane *ln, const bucket *q, size_t from, size_t to, int d)
{
    uint64_t pids[2][DTB_MAX_MOVES];
    int np[2] = {0, 0}, cur = 0;
    bool win[2] = {false, false};
    for (size_t i = from; i < to; i++) {
        if (i + 16 < to) /* the queue is in no useful order: fetch ahead */
            prefetch_resolved(u, q->ids[i + 16]);
        const int nx = cur ^ 1;
        np[nx] = 0;
        if (mark_resolved(u, ln, q->ids[i], d, &win[nx])) {
            np[nx] = dtb_unit_predecessors(u, q->ids[i], pids[nx]);
            for (int k = 0; k < np[nx]; k++)
                __builtin_prefetch(&u->n[pids[nx][k]], 1);
        }
        propagate(u, ln, pids[cur], np[cur], d, win[cur]);
        cur = nx;
    }
    propagate(u, ln, pids[cur], np[cur], d, win[cur]);
}

/* Counts positions, captures and draws once the unit is solved. */
static void count_unit(const unit *u, lane *ln, uint32_t from, uint32_t to)
{
    for (uint32_t id = from; id < to; id++) {
        dtb_solve_stats *st = &ln->st[u->h[half_of(u, id)].slot];
        st->positions++;
        if (u->n[id].flags & F_CAPTURE)
            st->captures++;
        if (!(u->n[id].flags & F_RESOLVED))
            st->draws++;
    }
}

/* One thread solves the whole unit. */
void dtb_node_solve_unit(const unit *u, lane *ln)
{
    const uint32_t n = (uint32_t)(u->nhalves * u->K);
    dtb_unit_clear_values(u);
    ln->top = -1;
    init_range(u, ln, 0, n);
    for (int d = 0; d <= ln->top && !ln->nomem; d++) {
        bucket *q = &ln->q[d];
        /* q grows only at later levels meanwhile */
        resolve_bucket(u, ln, q, 0, q->n, d);
        q->n = 0;
    }
    count_unit(u, ln, 0, n);
}

/* The highest level any lane has queued, and whether one ran out of memory. */
static void survey(const lane *lanes, int nlanes, int *top, bool *nomem)
{
    for (int l = 0; l < nlanes; l++) {
        *top = *top > lanes[l].top ? *top : lanes[l].top;
        *nomem |= lanes[l].nomem;
    }
}

enum { CHUNK = 4096 }; /* positions or queue entries a thread takes at a time in a shared unit */

static size_t chunks(size_t n) { return (n + CHUNK - 1) / CHUNK; }
static size_t chunk_end(size_t c, size_t n) { return n < (c + 1) * CHUNK ? n : (c + 1) * CHUNK; }

/* Predecessor facts of a shared unit are applied bucket by bucket: 2^16 nodes (256 KB, an L2's
 * worth) per bucket. Resolved positions per round, over all threads: bounds the fact buffers
 * (a resolved position has at most a few dozen predecessors). */
enum { BUCKET_SHIFT = 16, ROUND = 1 << 17 };

/* Queue entries a thread takes at a time while a shared unit resolves a level: levels can be
 * small, and a share much larger than this left one thread waiting for the other. */
enum { GRAIN = 512 };

/* Grain g of the level-d queues of all lanes taken one after the other: *q and its entries
 * from..to-1. */
static void level_grain(const lane *lanes, int d, size_t g, const bucket **q, size_t *from,
                        size_t *to)
{
    for (int l = 0;; l++) {
        const size_t n = lanes[l].q[d].n, ng = (n + GRAIN - 1) / GRAIN;
        if (g < ng) {
            *q = &lanes[l].q[d];
            *from = g * GRAIN;
            *to = n < *from + GRAIN ? n : *from + GRAIN;
            return;
        }
        g -= ng;
    }
}

/* A fact: local id << FACT_SHIFT | level << 1 | win (levels up to DTB_MAX_DTW take 10 bits). */
enum { FACT_SHIFT = 11 };
static uint64_t fact(uint64_t pid, int d, bool win) { return (uint64_t)pid << FACT_SHIFT | (uint64_t)d << 1 | win; }

/* resolve_bucket for a shared unit: resolved positions' predecessor facts go to the lane's fact
 * buffer instead of the nodes. */
static void gather_bucket(const unit *u, lane *ln, const bucket *q, size_t from, size_t to, int d)
{
    factbuf *fx = &ln->fx;
    for (size_t i = from; i < to && !ln->nomem; i++) {
        if (i + 16 < to)
            prefetch_resolved(u, q->ids[i + 16]);
        bool win;
        if (!mark_resolved(u, ln, q->ids[i], d, &win))
            continue;
        if (fx->cap - fx->n < DTB_MAX_MOVES) {
            const size_t cap = fx->cap ? 2 * fx->cap : 1 << 16;
            uint64_t *v = realloc(fx->v, cap * sizeof *v);
            if (!v) {
                ln->nomem = true;
                return;
            }
            fx->v = v;
            fx->cap = cap;
        }
        uint64_t pids[DTB_MAX_MOVES];
        const int np = dtb_unit_predecessors(u, q->ids[i], pids);
        for (int k = 0; k < np; k++)
            fx->v[fx->n++] = fact(pids[k], d, win);
    }
}

/* Sorts the lane's facts by bucket (a counting sort: two sequential passes). */
static void sort_facts(lane *ln, size_t nbuckets)
{
    factbuf *fx = &ln->fx;
    if (fx->nbegin < nbuckets + 1) {
        size_t *begin = realloc(fx->begin, (nbuckets + 1) * sizeof *begin);
        if (!begin) { /* no facts from this lane then (apply_bucket skips it); the solve fails */
            free(fx->begin);
            fx->begin = NULL;
            fx->nbegin = 0;
            ln->nomem = true;
            fx->n = 0;
            return;
        }
        fx->begin = begin;
        fx->nbegin = nbuckets + 1;
    }
    if (fx->sorted_cap < fx->cap) {
        uint64_t *sorted = realloc(fx->sorted, fx->cap * sizeof *sorted);
        if (!sorted) {
            ln->nomem = true;
            fx->n = 0;
        } else {
            fx->sorted = sorted;
            fx->sorted_cap = fx->cap;
        }
    }
    size_t *begin = fx->begin;
    memset(begin, 0, (nbuckets + 1) * sizeof *begin);
    for (size_t i = 0; i < fx->n; i++)
        begin[(fx->v[i] >> FACT_SHIFT >> BUCKET_SHIFT) + 1]++;
    for (size_t b = 1; b <= nbuckets; b++)
        begin[b] += begin[b - 1];
    for (size_t i = 0; i < fx->n; i++) /* begin[b] moves to the end of bucket b */
        fx->sorted[begin[fx->v[i] >> FACT_SHIFT >> BUCKET_SHIFT]++] = fx->v[i];
    for (size_t b = nbuckets; b > 0; b--) /* and back to its start */
        begin[b] = begin[b - 1];
    begin[0] = 0;
}

/* Applies every lane's facts for bucket b. Only this thread touches the bucket's nodes now. */
static void apply_bucket(const unit *u, lane *me, const lane *lanes, int nlanes, size_t b)
{
    for (int l = 0; l < nlanes; l++) {
        const factbuf *fx = &lanes[l].fx;
        if (!fx->begin)
            continue;
        const size_t end = fx->begin[b + 1];
        for (size_t i = fx->begin[b]; i < end; i++) {
            if (i + 32 < end) /* a bucket's facts come in no order: fetch ahead */
                __builtin_prefetch(&u->n[fx->sorted[i + 32] >> FACT_SHIFT], 1);
            const uint64_t f = fx->sorted[i];
            const uint32_t pid = (uint32_t)(f >> FACT_SHIFT);
            const int level = learn(&u->n[pid], (int)(f >> 1 & 1023), f & 1);
            if (level >= 0)
                dtb_unit_push(me, level, pid);
        }
    }
}

/* All threads solve one (large) unit together, each through its own lane.
 *
 * Such a unit's nodes lie far beyond the CPU caches, and a resolved position's predecessors are
 * spread all over them: updating them at once waited on memory for most of the time. So each
 * level goes in rounds: the threads resolve up to ROUND queued positions and write their
 * predecessors' facts to their own buffers, sort those by bucket (a range of nodes that fits an
 * L2 cache), then apply them bucket by bucket, each bucket by one thread from every buffer: no
 * atomic update, and each bucket's nodes stay in cache while its facts are applied. A level's
 * facts are all applied before the next level starts, which is all the result depends on. */
void dtb_node_solve_unit_shared(const unit *u, lane *lanes, int nlanes)
{
    const uint32_t n = (uint32_t)(u->nhalves * u->K);
    const size_t nbuckets = ((size_t)n >> BUCKET_SHIFT) + 1;
    int top = -1;
    bool nomem = false;
    dtb_unit_clear_values(u);
#pragma omp parallel num_threads(nlanes)
    {
        lane *me = &lanes[omp_get_thread_num()];
        me->top = -1;
#pragma omp for schedule(dynamic, 1)
        for (size_t c = 0; c < chunks(n); c++)
            init_range(u, me, (uint32_t)(c * CHUNK), (uint32_t)chunk_end(c, n));
#pragma omp single
        survey(lanes, nlanes, &top, &nomem);
        for (int d = 0; d <= top && !nomem; d++) {
            /* Every lane's level-d queue, as one list of grains, in rounds; pushes meanwhile go
             * to later levels. A small level is resolved by one thread directly: barriers and
             * uneven shares would cost more than the work. */
            size_t grains = 0;
            for (int l = 0; l < nlanes; l++)
                grains += (lanes[l].q[d].n + GRAIN - 1) / GRAIN;
            if (grains <= 2) {
#pragma omp single nowait
                for (int l = 0; l < nlanes; l++)
                    resolve_bucket(u, me, &lanes[l].q[d], 0, lanes[l].q[d].n, d);
            } else {
                for (size_t g0 = 0; g0 < grains; g0 += ROUND / GRAIN) {
                    const size_t g1 = grains - g0 < ROUND / GRAIN ? grains : g0 + ROUND / GRAIN;
#pragma omp for schedule(dynamic, 1)
                    for (size_t g = g0; g < g1; g++) {
                        const bucket *q;
                        size_t from, to;
                        level_grain(lanes, d, g, &q, &from, &to);
                        gather_bucket(u, me, q, from, to, d);
                    }
                    sort_facts(me, nbuckets);
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
                    for (size_t b = 0; b < nbuckets; b++)
                        apply_bucket(u, me, lanes, nlanes, b);
                    me->fx.n = 0; /* after the loop's barrier: nobody reads it any more */
                }
            }
#pragma omp barrier
#pragma omp single
            {
                for (int l = 0; l < nlanes; l++)
                    lanes[l].q[d].n = 0;
                survey(lanes, nlanes, &top, &nomem);
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t c = 0; c < chunks(n); c++)
            count_unit(u, me, (uint32_t)(c * CHUNK), (uint32_t)chunk_end(c, n));
    }
}

/* A lane's two fact arrays (gathered and sorted, 8 bytes a fact) grow to hold the facts of the
 * positions it resolves in one round: 32 a position allowed (about 20 measured on king-only
 * units, and doubling growth), ROUND positions at worst. */
uint64_t dtb_solve_shared_bytes(uint64_t block_size, int threads)
{
    if (threads < 2 || block_size < SHARED_UNIT_MIN)
        return 0;
    return 2 * sizeof(uint64_t) * 32 * (uint64_t)ROUND;
}
