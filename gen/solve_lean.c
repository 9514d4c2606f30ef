/* The lean solve of a kings-only pair (gen/solve_unit.h).
 *
 * A kings-only pair is one unit of every position of both materials (3.5e9 a half for
 * KKKKvKKK), and the node state above (4 bytes, 2 more allowed for the queues) of that unit is
 * far beyond a workstation. Without men, a position that has no capture has no exit either: its
 * moves are king moves inside the unit, so all the state a quiet position needs is the count of
 * its successors not yet known to be wins (one byte, cnt). Capture positions take their value
 * from their exits at the start, as every other solve does; and which level a resolved position
 * belongs to is its value byte itself (wins at odd DTW, losses at even), so the level queues
 * become a scan of the value bytes per level. One byte a position beyond the values and the
 * capture bits, against 6: the price is that scan (sequential, a few seconds a level) and a
 * compare-and-swap per predecessor fact.
 *
 * cnt is 0 for a position that listens no more: a capture position, or one resolved. Facts of
 * level d (positions whose value is at d):
 *   - a loss at d: each quiet predecessor still listening wins at d+1 (cnt set to 0);
 *   - a win at d: one successor fewer to hear from; the last one makes the predecessor a loss
 *     at d+1 (every successor a win, the longest at d).
 * Exactly one fact resolves a position (the compare-and-swap that sets its cnt to 0), so its
 * value byte has one writer. A position with a lost successor never reaches 0 through wins,
 * so the order of a level's facts changes nothing; and every fact of level d is applied before
 * level d+1 is scanned: the values are those of the node solve, whatever the thread count.
 *
 * Shared by several processes (dtb_solve_pair_lean_shared): each owns a range of each half and
 * holds the counts, values and capture bits of those positions only. A level's facts reach a
 * predecessor wherever it lies, so after each scan the processes swap the positions they found
 * at level d (their ids, as runs of gaps: a byte or two an id) and each applies the facts of the
 * others' positions to its own range. Sending the resolved positions, not the facts, costs one id
 * per resolved position instead of one per predecessor (a king move each, twenty and more), at
 * the price of every process generating the predecessors of every resolved position. The facts
 * are the same as alone, so are the values, whatever the number of processes. */
#include "solve_unit.h"

/* Positions a thread takes at a time while the lean solve initialises or scans. */
enum { LEAN_CHUNK = 1 << 16 };

/* The value byte of the level-d positions. The levels are told apart by their bytes, so the lean
 * solve holds distances up to the byte limit only (lean_max): no escape, no long list. */
static dtb_value level_value(int d) { return d & 1 ? dtb_value_win(d) : dtb_value_loss(d); }

/* The longest distance the lean solve holds: byte-sized and within the registry's byte limit. */
static int lean_max(const dtb_solved *s)
{
    const int m = dtb_solved_byte_max(s);
    return m < DTB_VALUE_BYTE_WIN_MAX ? m : DTB_VALUE_BYTE_WIN_MAX + 1;
}

/* Initialises positions from..to-1 of half h (ranks in its table; cnt holds the counts of the
 * half's positions from lo on): capture positions get their
 * value from their exits and cnt 0, quiet ones cnt = their king moves (none: lost at once).
 * Returns the highest level set. */
static int lean_init_range(const unit *u, uint8_t *cnt, int h, uint64_t lo, uint64_t from,
                           uint64_t to, capture_batch *cb, capture_bits *bits, bool *ok)
{
    const dtb_board *b = u->b;
    const half *hf = &u->h[h];
    dtb_solved_table *t = hf->t;
    int top = -1;
    dtb_pos p;
    dtb_unit_local_pos(u, (uint64_t)h * u->K + from, &p);
    cb->npos = cb->nexit = 0;
    for (uint64_t r = from; r < to; r++) {
        if (r > from)
            next_kings(u, h, &p);
        const uint64_t i = hf->base + r;
        dtb_movelist ml;
        ml.count = 0;
        bool capture;
        if (u->quick_capture) {
            dtb_bb men; /* kings-only pairs: none */
            const bool kc = b->squares > 64
                                ? may_capture_wide(b, hf, p.kings[DTB_WHITE], p.kings[DTB_BLACK], &men)
                                : may_capture(b, hf, (uint64_t)p.kings[DTB_WHITE], (uint64_t)p.kings[DTB_BLACK], &men);
            capture = kc && hf->lone;
            if (kc && !hf->lone) {
                const dtb_status st = dtb_generate_captures_by(b, &p, 0, true, &ml);
                assert(st == DTB_OK);
                (void)st;
                capture = ml.count > 0;
            }
        } else {
            const dtb_status st = dtb_generate_captures(b, &p, &ml);
            assert(st == DTB_OK);
            (void)st;
            capture = ml.count > 0;
        }
        if (capture) {
            cnt[r - lo] = 0;
            capture_bits_set(bits, t->captures, i);
            if (hf->lone) { /* every capture takes black's last piece */
                t->values[i] = dtb_value_win(1);
                continue;
            }
            if (cb->nexit + ml.count > EXITS_CAP)
                *ok &= dtb_unit_flush_captures(u->s, t, cb);
            cb->at[cb->npos] = i;
            cb->first[cb->npos] = (uint16_t)cb->nexit;
            cb->n[cb->npos] = (uint16_t)ml.count;
            for (int m = 0; m < ml.count; m++) {
                const dtb_value *v = dtb_solved_value_after(u->s, &p, &ml.moves[m], &cb->slot[cb->nexit]);
                __builtin_prefetch(v);
                cb->exit[cb->nexit++] = v;
            }
            if (++cb->npos == BATCH)
                *ok &= dtb_unit_flush_captures(u->s, t, cb);
            continue;
        }
        int c = 0;
        if (u->quick_capture && b->squares <= 64) {
            const uint64_t occ = (uint64_t)(p.kings[DTB_WHITE] | p.kings[DTB_BLACK]);
            for (uint64_t k = (uint64_t)p.kings[DTB_WHITE]; k; k &= k - 1)
                c += __builtin_popcountll(king_reach64(b, __builtin_ctzll(k), occ, true));
        } else {
            c = dtb_count_king_steps(b, p.kings[DTB_WHITE], b->all & ~dtb_pos_occupied(&p));
        }
        assert(c <= 255);
        cnt[r - lo] = (uint8_t)c;
        if (c == 0) /* no move at all */
            t->values[i] = dtb_value_loss(0);
    }
    *ok &= dtb_unit_flush_captures(u->s, t, cb);
    /* the highest level set (captures' values lie anywhere) */
    for (uint64_t r = from; r < to; r++) {
        const dtb_wvalue v = dtb_solved_exact_at(u->s, t, hf->base + r);
        if (v != DTB_WVALUE_DRAW) {
            const int d = dtb_wvalue_dtw(v);
            top = top > d ? top : d;
        }
    }
    return top;
}

/* This process's positions of each half, [lo, hi), and the processes it shares them with
 * (NULL: alone, and [lo, hi) is the whole half). */
typedef struct lean_own {
    uint64_t lo, hi;
    const dtb_lean_share *sh;
} lean_own;

static inline bool lean_owns(const unit *u, const lean_own *own, uint64_t pid)
{
    const uint64_t r = in_half(u, pid);
    return r >= own->lo && r < own->hi;
}

/* Where pid's count is: the counts of this process's range, half after half. */
static inline uint64_t lean_slot(const unit *u, const lean_own *own, uint64_t pid)
{
    return (uint64_t)half_of(u, pid) * (own->hi - own->lo) + in_half(u, pid) - own->lo;
}

/* Applies one fact to predecessor pid (local id): its successor resolved at level d, a win for
 * its side when is_win. Returns true when it resolves pid (at d+1). */
static inline bool lean_learn(const unit *u, const lean_own *own, uint8_t *cnt, uint64_t pid,
                              int d, bool is_win)
{
    uint8_t *const at = &cnt[lean_slot(u, own, pid)];
    uint8_t c = __atomic_load_n(at, __ATOMIC_RELAXED), nc;
    do {
        if (c == 0)
            return false;
        nc = is_win ? (uint8_t)(c - 1) : 0;
    } while (!__atomic_compare_exchange_n(at, &c, nc, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    if (nc != 0)
        return false;
    const half *hf = &u->h[half_of(u, pid)];
    __atomic_store_n(&hf->t->values[hf->base + in_half(u, pid)],
                     is_win ? dtb_value_loss(d + 1) : dtb_value_win(d + 1), __ATOMIC_RELAXED);
    return true;
}

/* Resolved positions whose predecessors are gathered (and their counts prefetched) before any
 * fact is applied: the counts lie all over the unit. */
enum { LEAN_BATCH = 512 };


/* Applies the facts of resolved position id (local id, level d) to its predecessors in this
 * process's range, gathered in pids[0..*np) and applied a batch at a time. */
static inline uint64_t lean_tell(const unit *u, uint8_t *cnt, const lean_own *own, uint64_t id,
                                 int d, uint64_t *pids, int *np)
{
    uint64_t resolved = 0;
    const int base = *np, n = dtb_unit_predecessors(u, id, pids + base);
    for (int k = 0; k < n; k++)
        if (lean_owns(u, own, pids[base + k])) {
            pids[*np] = pids[base + k];
            __builtin_prefetch(&cnt[lean_slot(u, own, pids[(*np)++])], 1);
        }
    if (*np >= LEAN_BATCH) {
        for (int k = 0; k < *np; k++)
            resolved += lean_learn(u, own, cnt, pids[k], d, d & 1);
        *np = 0;
    }
    return resolved;
}

/* ---- runs of ids: a level's positions as one process sends them to the others ---------------
 * A run is a header (its first id, 8 bytes; how many ids, 4; bytes of gaps, 4) and the gaps
 * between its ascending ids, seven bits a byte, the high bit saying another byte follows. Runs
 * are independent: a chunk's positions are one run, and runs are read in parallel. */
enum { RUN_HEADER = 16 };

typedef struct lean_runs {
    uint8_t *b;
    size_t n, cap;
    bool nomem;
} lean_runs;

static bool runs_room(lean_runs *r, size_t more)
{
    if (r->n + more <= r->cap)
        return true;
    size_t cap = r->cap ? r->cap : 1 << 16;
    while (cap < r->n + more)
        cap *= 2;
    uint8_t *b = realloc(r->b, cap);
    if (!b)
        return r->nomem = true, false;
    r->b = b;
    r->cap = cap;
    return true;
}

/* Writes one run into r, an id at a time (ascending). */
typedef struct run_writer {
    lean_runs *r;
    size_t at;
    uint64_t first, last;
    uint32_t count;
} run_writer;

static void run_open(run_writer *w, lean_runs *r)
{
    *w = (run_writer){.r = r, .at = r->n};
    if (runs_room(r, RUN_HEADER))
        r->n += RUN_HEADER;
}

static void run_push(run_writer *w, uint64_t id)
{
    lean_runs *r = w->r;
    if (r->nomem)
        return;
    if (w->count++ == 0) {
        w->first = w->last = id;
        return;
    }
    if (!runs_room(r, 10))
        return;
    for (uint64_t gap = id - w->last;; gap >>= 7) {
        r->b[r->n++] = (uint8_t)((gap & 127) | (gap >= 128 ? 128 : 0));
        if (gap < 128)
            break;
    }
    w->last = id;
}

static void run_close(run_writer *w)
{
    lean_runs *r = w->r;
    if (r->nomem)
        return;
    if (!w->count) { /* no id: no run */
        r->n = w->at;
        return;
    }
    const uint32_t bytes = (uint32_t)(r->n - w->at - RUN_HEADER);
    memcpy(r->b + w->at, &w->first, 8);
    memcpy(r->b + w->at + 8, &w->count, 4);
    memcpy(r->b + w->at + 12, &bytes, 4);
}

/* The runs in b[0..n): where each starts, into *starts (malloc'd; NULL when none). Returns how
 * many, or -1 when the bytes are not whole runs (corrupt) or out of memory. */
static int64_t runs_split(const uint8_t *b, uint64_t n, const uint8_t ***starts)
{
    *starts = NULL;
    int64_t count = 0;
    for (uint64_t at = 0; at < n; count++) {
        uint32_t bytes;
        if (n - at < RUN_HEADER)
            return -1;
        memcpy(&bytes, b + at + 12, 4);
        if (n - at - RUN_HEADER < bytes)
            return -1;
        at += RUN_HEADER + bytes;
    }
    if (!count)
        return 0;
    const uint8_t **s = malloc((size_t)count * sizeof *s);
    if (!s)
        return -1;
    uint64_t at = 0;
    for (int64_t k = 0; k < count; k++) {
        uint32_t bytes;
        memcpy(&bytes, b + at + 12, 4);
        s[k] = b + at;
        at += RUN_HEADER + bytes;
    }
    *starts = s;
    return count;
}

/* Applies the facts of the level-d positions of one run (another process's) to this process's
 * range; returns how many positions that resolved. false in *bad when the run's ids leave the
 * unit. */
static uint64_t runs_tell(const unit *u, uint8_t *cnt, const lean_own *own, const uint8_t *run,
                          int d, bool *bad)
{
    uint64_t id;
    uint32_t count, bytes;
    memcpy(&id, run, 8);
    memcpy(&count, run + 8, 4);
    memcpy(&bytes, run + 12, 4);
    const uint8_t *g = run + RUN_HEADER, *end = g + bytes;
    const uint64_t n = (uint64_t)u->nhalves * u->K;
    uint64_t pids[LEAN_BATCH + DTB_MAX_MOVES], resolved = 0;
    int np = 0;
    for (uint32_t k = 0; k < count; k++) {
        if (k) {
            uint64_t gap = 0;
            for (int shift = 0;; shift += 7) {
                if (g == end || shift > 56) {
                    *bad = true;
                    return resolved;
                }
                const uint8_t c = *g++;
                gap |= (uint64_t)(c & 127) << shift;
                if (!(c & 128))
                    break;
            }
            id += gap;
        }
        if (id >= n) {
            *bad = true;
            return resolved;
        }
        resolved += lean_tell(u, cnt, own, id, d, pids, &np);
    }
    for (int k = 0; k < np; k++)
        resolved += lean_learn(u, own, cnt, pids[k], d, d & 1);
    return resolved;
}

/* Propagates the level-d positions among ranks from..to-1 of half h to the predecessors in this
 * process's range; returns how many positions that resolved (at d+1). */
static uint64_t lean_scan_range(const unit *u, uint8_t *cnt, const lean_own *own, int h,
                                uint64_t from, uint64_t to, int d, lean_runs *runs)
{
    const half *hf = &u->h[h];
    const dtb_value *vals = hf->t->values + hf->base;
    const dtb_value want = level_value(d);
    const bool is_win = d & 1;
    /* a word of the value bytes holds `want` somewhere: the classic zero-byte test */
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const uint64_t pattern = ones * want;
    uint64_t pids[LEAN_BATCH + DTB_MAX_MOVES];
    int np = 0;
    uint64_t resolved = 0;
    run_writer w = {0};
    if (runs)
        run_open(&w, runs);
    uint64_t r = from;
    while (r < to) {
        /* other threads store bytes of level d+1 meanwhile: read the values by relaxed atomic
         * loads, a word at a time where aligned */
        if (((uintptr_t)(vals + r) & 7) == 0 && r + 8 <= to) {
            const uint64_t w = __atomic_load_n((const uint64_t *)(vals + r), __ATOMIC_RELAXED) ^ pattern;
            if (!((w - ones) & ~w & highs)) {
                r += 8;
                continue;
            }
        }
        const uint64_t end = r + 8 < to ? r + 8 : to;
        for (; r < end; r++) {
            if (__atomic_load_n(&vals[r], __ATOMIC_RELAXED) != want)
                continue;
            if (runs)
                run_push(&w, (uint64_t)h * u->K + r);
            resolved += lean_tell(u, cnt, own, (uint64_t)h * u->K + r, d, pids, &np);
        }
    }
    if (runs)
        run_close(&w);
    for (int k = 0; k < np; k++)
        resolved += lean_learn(u, own, cnt, pids[k], d, is_win);
    return resolved;
}

/* Counts positions, captures, draws and the results of half h's ranks from..to-1. */
static void lean_count_range(const unit *u, lane *ln, int h, uint64_t from, uint64_t to)
{
    const half *hf = &u->h[h];
    dtb_solve_stats *st = &ln->st[hf->slot];
    for (uint64_t r = from; r < to; r++) {
        const uint64_t i = hf->base + r;
        const dtb_value v = hf->t->values[i];
        st->positions++;
        st->captures += hf->t->captures[i / 64] >> (i % 64) & 1;
        st->draws += v == DTB_VALUE_DRAW;
        dtb_unit_count_result(st, i, dtb_wvalue_of_byte(v)); /* lean levels are byte-sized */
    }
}

uint64_t dtb_solve_lean_bytes(uint64_t positions, int threads)
{
    return positions + (uint64_t)threads * sizeof(capture_batch);
}

/* The chunks of this process's range: per_half of them in each half. */
static void lean_chunk(const unit *u, const lean_own *own, uint64_t per_half, uint64_t c, int *h,
                       uint64_t *from, uint64_t *to)
{
    (void)u;
    *h = (int)(c / per_half);
    *from = own->lo + c % per_half * LEAN_CHUNK;
    *to = *from + LEAN_CHUNK < own->hi ? *from + LEAN_CHUNK : own->hi;
}

/* What the processes sharing the unit agree on after each step: v[0] the highest level (or
 * whether a level resolved anything), v[1] whether one of them failed. Alone: v as it is. */
static dtb_status lean_agree(const lean_own *own, int64_t v[2], dtb_error *e)
{
    return own->sh ? own->sh->max(own->sh->ctx, v, 2, e) : DTB_OK;
}

/* The level-d positions of the others (theirs: their runs, received) to be heard. */
typedef struct lean_heard {
    uint8_t **theirs;
    uint64_t *lens;
    const uint8_t **starts; /* every run of every process's bytes */
    int64_t nruns;
} lean_heard;

static void heard_free(lean_heard *hd, int nranks)
{
    for (int q = 0; hd->theirs && q < nranks; q++)
        free(hd->theirs[q]);
    free(hd->theirs), free(hd->lens), free(hd->starts);
    *hd = (lean_heard){0};
}

/* Sends this process's runs of a level to the others and takes theirs, split into runs. */
static dtb_status lean_swap(const lean_own *own, const lean_runs *mine, lean_heard *hd, dtb_error *e)
{
    const int nranks = own->sh->ranks;
    *hd = (lean_heard){.theirs = calloc((size_t)nranks, sizeof *hd->theirs),
                       .lens = calloc((size_t)nranks, sizeof *hd->lens)};
    if (!hd->theirs || !hd->lens)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    const dtb_status rc = own->sh->allgather(own->sh->ctx, mine->b, mine->n, hd->theirs, hd->lens, e);
    if (rc != DTB_OK)
        return rc;
    int64_t total = 0;
    const uint8_t ***each = calloc((size_t)nranks, sizeof *each);
    int64_t *count = calloc((size_t)nranks, sizeof *count);
    dtb_status st = each && count ? DTB_OK : dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (int q = 0; q < nranks && st == DTB_OK; q++) {
        if (q == own->sh->rank || !hd->lens[q])
            continue;
        count[q] = runs_split(hd->theirs[q], hd->lens[q], &each[q]);
        if (count[q] < 0)
            st = dtb_error_set(e, DTB_E_CORRUPT, "process %d sent a level's positions that are "
                               "not whole runs", q);
        else
            total += count[q];
    }
    if (st == DTB_OK && total && !(hd->starts = malloc((size_t)total * sizeof *hd->starts)))
        st = dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (int q = 0; each && count && q < nranks; q++) {
        if (st == DTB_OK && count[q] > 0) {
            memcpy(hd->starts + hd->nruns, each[q], (size_t)count[q] * sizeof *hd->starts);
            hd->nruns += count[q];
        }
        free(each[q]);
    }
    free(each), free(count);
    return st;
}

/* Solves the one unit of the kings-only pair u (set up, halves of u->K positions) the lean way
 * (from the caller's main thread: the share's collectives are made by the master thread):
 * the positions own names, with the processes it shares them with. lanes: one per thread, for
 * their stats. DTB_OK, or what the share failed with (lanes report the solve's own failures). */
static dtb_status solve_lean(const unit *u, const lean_own *own, lane *lanes, int nlanes,
                             dtb_solve_progress progress, void *user, dtb_error *e)
{
    const uint64_t K = own->hi - own->lo, n = (uint64_t)u->nhalves * K;
    const uint64_t per_half = (K + LEAN_CHUNK - 1) / LEAN_CHUNK, nchunks = per_half * (uint64_t)u->nhalves;
    uint8_t *cnt = dtb_huge_calloc(n ? n : 1);
    lean_runs *runs = own->sh ? calloc((size_t)nlanes + 1, sizeof *runs) : NULL;
    if (!cnt || (own->sh && !runs)) {
        dtb_huge_free(cnt, n ? n : 1);
        free(runs);
        lanes[0].nomem = true;
        return DTB_OK;
    }
    for (int h = 0; h < u->nhalves; h++)
        memset(u->h[h].t->values + u->h[h].base + own->lo, DTB_VALUE_DRAW, K);
    int top = -1;
    dtb_status failed = DTB_OK;
    lean_heard heard = {0};
    bool heard_bad = false;
    uint64_t done = 0, level_resolved = 0;
    const uint64_t total = 2 * n; /* progress: initialising counts for n, resolving for n */
#pragma omp parallel num_threads(nlanes)
    {
        lane *me = &lanes[omp_get_thread_num()];
        capture_batch *cb = malloc(sizeof *cb);
        if (!cb)
            me->nomem = true;
        int mytop = -1;
        uint64_t pending = 0;
#pragma omp for schedule(dynamic, 1)
        for (uint64_t c = 0; c < nchunks; c++) {
            if (!cb)
                continue;
            int h;
            uint64_t from, to;
            lean_chunk(u, own, per_half, c, &h, &from, &to);
            capture_bits bits = {NULL, 0};
            bool ok = true;
            const int t = lean_init_range(u, cnt + (uint64_t)h * K, h, own->lo, from, to, cb, &bits, &ok);
            capture_bits_flush(&bits);
            if (!ok || t > lean_max(u->s))
                me->overflow = true;
            mytop = mytop > t ? mytop : t;
            pending += to - from;
            if (progress && pending >= PROGRESS_STEP)
                dtb_unit_report_progress(progress, user, &done, &pending, total);
        }
        free(cb);
        if (progress && pending)
            dtb_unit_report_progress(progress, user, &done, &pending, total);
#pragma omp critical(dtb_lean_top)
        top = top > mytop ? top : mytop;
#pragma omp barrier
#pragma omp master
        { /* the highest level any process set */
            int64_t v[2] = {top, dtb_unit_lanes_failed(lanes, nlanes)};
            failed = lean_agree(own, v, e);
            if (v[1] && failed == DTB_OK && !dtb_unit_lanes_failed(lanes, nlanes))
                failed = dtb_error_set(e, DTB_E_IO, "another process sharing the pair failed");
            top = v[1] ? -1 : (int)v[0];
        }
#pragma omp barrier
        /* Level by level. The capture positions' levels are known from the start; beyond them, a
         * level with no position ends the solve. Sharing, the runs of each chunk's level-d
         * positions go to the others, whose runs are then heard. */
        for (int d = 0; d <= top && failed == DTB_OK; d++) {
            uint64_t mine = 0;
            lean_runs *mr = runs ? &runs[omp_get_thread_num()] : NULL;
#pragma omp for schedule(dynamic, 1)
            for (uint64_t c = 0; c < nchunks; c++) {
                int h;
                uint64_t from, to;
                lean_chunk(u, own, per_half, c, &h, &from, &to);
                mine += lean_scan_range(u, cnt, own, h, from, to, d, mr);
            }
#pragma omp atomic
            level_resolved += mine;
#pragma omp barrier
#pragma omp master
            { /* every fact of level d is in: this process's, then the others' */
                bool nomem = false;
                if (runs) {
                    lean_runs *all = &runs[nlanes];
                    all->n = 0;
                    for (int l = 0; l < nlanes; l++) {
                        nomem |= runs[l].nomem || !runs_room(all, runs[l].n);
                        if (!nomem && runs[l].n)
                            memcpy(all->b + all->n, runs[l].b, runs[l].n);
                        all->n += nomem ? 0 : runs[l].n;
                        runs[l].n = 0;
                    }
                    if (nomem) { /* the swap is collective: it takes place, without them */
                        me->nomem = true;
                        all->n = 0;
                    }
                    failed = lean_swap(own, all, &heard, e);
                }
            }
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
            for (int64_t k = 0; k < heard.nruns; k++) {
                bool bad = false;
                const uint64_t r = runs_tell(u, cnt, own, heard.starts[k], d, &bad);
#pragma omp atomic
                level_resolved += r;
                if (bad)
                    __atomic_store_n(&heard_bad, true, __ATOMIC_RELAXED);
            }
#pragma omp master
            {
                heard_free(&heard, runs ? own->sh->ranks : 0);
                if (heard_bad && failed == DTB_OK)
                    failed = dtb_error_set(e, DTB_E_CORRUPT, "another process sent a position "
                                           "beyond the unit");
                int64_t v[2] = {level_resolved > 0, failed != DTB_OK || dtb_unit_lanes_failed(lanes, nlanes)};
                dtb_error agree_e; /* the agreement is collective: made after a failure too */
                const dtb_status ag = lean_agree(own, v, &agree_e);
                if (failed == DTB_OK && ag != DTB_OK)
                    failed = ag, *e = agree_e;
                if (v[1] && failed == DTB_OK && !dtb_unit_lanes_failed(lanes, nlanes))
                    failed = dtb_error_set(e, DTB_E_IO, "another process sharing the pair failed");
                if (v[1])
                    top = -1; /* some process failed: every one stops */
                else if (v[0] && d + 1 > top) {
                    if (d + 1 > lean_max(u->s))
                        me->overflow = true;
                    else
                        top = d + 1;
                }
                if (progress) {
                    uint64_t step = level_resolved;
                    dtb_unit_report_progress(progress, user, &done, &step, total);
                }
                level_resolved = 0;
            }
#pragma omp barrier
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t c = 0; c < nchunks; c++) {
            int h;
            uint64_t from, to;
            lean_chunk(u, own, per_half, c, &h, &from, &to);
            lean_count_range(u, me, h, from, to);
        }
    }
    if (progress && done < total) {
        uint64_t rest = total - done;
        dtb_unit_report_progress(progress, user, &done, &rest, total);
    }
    for (int l = 0; runs && l <= nlanes; l++)
        free(runs[l].b);
    free(runs);
    dtb_huge_free(cnt, n ? n : 1);
    return failed;
}

bool dtb_solve_lean_applies(const dtb_material *m)
{
    return m->men[DTB_WHITE] + m->men[DTB_BLACK] == 0 && m->kings[DTB_WHITE] + m->kings[DTB_BLACK] > 0;
}

void dtb_lean_share_range(uint64_t positions, int rank, int ranks, uint64_t align, uint64_t *lo,
                          uint64_t *hi)
{
    /* whole pieces of align positions to each process (the last takes the rest) */
    align = align ? align : 64;
    assert(align % 64 == 0 && "ranges hold whole words of capture bits");
    const uint64_t pieces = (positions + align - 1) / align;
    *lo = pieces * (uint64_t)rank / (uint64_t)ranks * align;
    *hi = rank + 1 == ranks ? positions : pieces * (uint64_t)(rank + 1) / (uint64_t)ranks * align;
    *lo = *lo < positions ? *lo : positions;
    *hi = *hi < positions ? *hi : positions;
}

/* The lean solve of a kings-only pair, alone (sh NULL) or shared: its single unit (block 0 of
 * both members). */
static dtb_status lean_pair(dtb_solved *s, dtb_material m, const dtb_lean_share *sh,
                            dtb_solve_stats stats[2], dtb_solve_progress progress, void *user,
                            dtb_error *e)
{
    const dtb_board *b = dtb_solved_board(s);
    const dtb_material fm = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &fm);
    dtb_solved_table *t = dtb_solved_add(s, m, e);
    dtb_solved_table *ft = t && !self ? dtb_solved_add(s, fm, e) : t;
    if (!t || !ft)
        return DTB_E_NOMEM;
    if (!dtb_solve_lean_applies(&m))
        return dtb_error_set(e, DTB_E_INVALID, "the lean solve takes kings-only pairs");
    dtb_index_fast fxt, fxft;
    const bool narrow = dtb_index_fast_get(t->index, &fxt) && dtb_index_fast_get(ft->index, &fxft);
    const int nthreads = omp_get_max_threads();
    lane *lanes = calloc((size_t)nthreads, sizeof *lanes);
    if (!lanes)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory");
    for (int l = 0; l < nthreads; l++) {
        dtb_unit_stats_reset(&lanes[l].st[0]);
        dtb_unit_stats_reset(&lanes[l].st[1]);
    }
    unit u = {.b = b, .s = s, .K = dtb_index_block_size(t->index), .shared = true,
              .fx = {narrow ? &fxt : NULL, narrow ? &fxft : NULL},
              .quick_capture = b->variant->kings_fly};
    const work wk = dtb_unit_work_of(b, t, ft, 0);
    dtb_unit_setup(&u, &wk, t, ft, self);
    lean_own own = {.lo = 0, .hi = u.K, .sh = sh};
    if (sh)
        dtb_lean_share_range(u.K, sh->rank, sh->ranks, sh->align, &own.lo, &own.hi);
    const dtb_status rc = solve_lean(&u, &own, lanes, nthreads, progress, user, e);
    bool overflow = false, nomem = false;
    dtb_unit_stats_reset(&stats[0]);
    dtb_unit_stats_reset(&stats[1]);
    for (int l = 0; l < nthreads; l++) {
        overflow |= lanes[l].overflow;
        nomem |= lanes[l].nomem;
        dtb_unit_merge_stats(&stats[0], &lanes[l].st[0]);
        dtb_unit_merge_stats(&stats[1], &lanes[l].st[1]);
    }
    free(lanes);
    if (overflow)
        return dtb_error_set(e, DTB_E_RANGE, "a distance to win exceeds the %d plies the lean "
                             "solve of a kings-only pair holds", lean_max(s));
    if (nomem)
        return dtb_error_set(e, DTB_E_NOMEM, "out of memory while solving");
    return rc;
}

dtb_status dtb_lean_solve_pair(dtb_solved *s, dtb_material m, dtb_solve_stats stats[2],
                               dtb_solve_progress progress, void *user, dtb_error *e)
{
    return lean_pair(s, m, NULL, stats, progress, user, e);
}

dtb_status dtb_solve_pair_lean_shared(dtb_solved *s, dtb_material m, const dtb_lean_share *sh,
                                      dtb_solve_stats stats[2], dtb_solve_progress progress,
                                      void *user, dtb_error *e)
{
    return lean_pair(s, m, sh, stats, progress, user, e);
}
