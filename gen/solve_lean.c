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
 * level d+1 is scanned: the values are those of the node solve, whatever the thread count. */
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

/* Initialises positions from..to-1 of half h (ranks in its table): capture positions get their
 * value from their exits and cnt 0, quiet ones cnt = their king moves (none: lost at once).
 * Returns the highest level set. */
static int lean_init_range(const unit *u, uint8_t *cnt, int h, uint64_t from, uint64_t to,
                           capture_batch *cb, capture_bits *bits, bool *ok)
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
            cnt[r] = 0;
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
        cnt[r] = (uint8_t)c;
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

/* Applies one fact to predecessor pid (local id): its successor resolved at level d, a win for
 * its side when is_win. Returns true when it resolves pid (at d+1). */
static inline bool lean_learn(const unit *u, uint8_t *cnt, uint64_t pid, int d, bool is_win)
{
    uint8_t c = __atomic_load_n(&cnt[pid], __ATOMIC_RELAXED), nc;
    do {
        if (c == 0)
            return false;
        nc = is_win ? (uint8_t)(c - 1) : 0;
    } while (!__atomic_compare_exchange_n(&cnt[pid], &c, nc, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
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

/* Propagates the level-d positions among ranks from..to-1 of half h; returns how many
 * positions that resolved (at d+1). */
static uint64_t lean_scan_range(const unit *u, uint8_t *cnt, int h, uint64_t from, uint64_t to, int d)
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
            const int n = dtb_unit_predecessors(u, (uint64_t)h * u->K + r, pids + np);
            for (int k = 0; k < n; k++)
                __builtin_prefetch(&cnt[pids[np + k]], 1);
            np += n;
            if (np >= LEAN_BATCH) {
                for (int k = 0; k < np; k++)
                    resolved += lean_learn(u, cnt, pids[k], d, is_win);
                np = 0;
            }
        }
    }
    for (int k = 0; k < np; k++)
        resolved += lean_learn(u, cnt, pids[k], d, is_win);
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

/* Solves the one unit of the kings-only pair u (set up, halves of u->K positions) the lean way.
 * lanes: one per thread, for their stats. */
static void solve_lean(const unit *u, lane *lanes, int nlanes, dtb_solve_progress progress, void *user)
{
    const uint64_t K = u->K, n = (uint64_t)u->nhalves * K;
    const uint64_t per_half = (K + LEAN_CHUNK - 1) / LEAN_CHUNK, nchunks = per_half * (uint64_t)u->nhalves;
    uint8_t *cnt = dtb_huge_calloc(n ? n : 1);
    if (!cnt) {
        lanes[0].nomem = true;
        return;
    }
    dtb_unit_clear_values(u);
    int top = -1;
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
            const int h = (int)(c / per_half);
            const uint64_t from = c % per_half * LEAN_CHUNK, to = from + LEAN_CHUNK < K ? from + LEAN_CHUNK : K;
            capture_bits bits = {NULL, 0};
            bool ok = true;
            const int t = lean_init_range(u, cnt + (uint64_t)h * K, h, from, to, cb, &bits, &ok);
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
        /* Level by level. The capture positions' levels are known from the start; beyond them, a
         * level with no position ends the solve. */
        for (int d = 0; d <= top && !dtb_unit_lanes_failed(lanes, nlanes); d++) {
            uint64_t mine = 0;
#pragma omp for schedule(dynamic, 1)
            for (uint64_t c = 0; c < nchunks; c++) {
                const int h = (int)(c / per_half);
                const uint64_t from = c % per_half * LEAN_CHUNK, to = from + LEAN_CHUNK < K ? from + LEAN_CHUNK : K;
                mine += lean_scan_range(u, cnt, h, from, to, d);
            }
#pragma omp atomic
            level_resolved += mine;
#pragma omp barrier
#pragma omp single
            { /* every fact of level d is in */
                if (level_resolved && d + 1 > top) {
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
        }
#pragma omp for schedule(dynamic, 1)
        for (uint64_t c = 0; c < nchunks; c++) {
            const int h = (int)(c / per_half);
            const uint64_t from = c % per_half * LEAN_CHUNK, to = from + LEAN_CHUNK < K ? from + LEAN_CHUNK : K;
            lean_count_range(u, me, h, from, to);
        }
    }
    if (progress && done < total) {
        uint64_t rest = total - done;
        dtb_unit_report_progress(progress, user, &done, &rest, total);
    }
    dtb_huge_free(cnt, n ? n : 1);
}

bool dtb_solve_lean_applies(const dtb_material *m)
{
    return m->men[DTB_WHITE] + m->men[DTB_BLACK] == 0 && m->kings[DTB_WHITE] + m->kings[DTB_BLACK] > 0;
}

/* dtb_solve_pair of a kings-only pair, lean: its single unit (block 0 of both members). */
dtb_status dtb_lean_solve_pair(dtb_solved *s, dtb_material m, dtb_solve_stats stats[2],
                                  dtb_solve_progress progress, void *user, dtb_error *e)
{
    const dtb_board *b = dtb_solved_board(s);
    const dtb_material fm = dtb_material_flip(m);
    const bool self = dtb_material_equal(&m, &fm);
    dtb_solved_table *t = dtb_solved_add(s, m, e);
    dtb_solved_table *ft = t && !self ? dtb_solved_add(s, fm, e) : t;
    if (!t || !ft)
        return DTB_E_NOMEM;
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
    solve_lean(&u, lanes, nthreads, progress, user);
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
    return DTB_OK;
}
