/* One-ply minimax over stored successors. Win: the fastest move to a lost successor. Loss:
 * every move reaches a won successor (or there is no move), the slowest one. Else a draw. */
#include "check.h"

#include <assert.h>

#include "movegen.h"

dtb_wvalue dtb_check_derive(const dtb_solved *s, const dtb_pos *p)
{
    const dtb_board *b = dtb_solved_board(s);
    dtb_movelist ml;
    const dtb_status st = dtb_generate(b, p, &ml);
    assert(st == DTB_OK);
    (void)st;
    int best_win = -1, longest_loss = -1;
    bool draw = false;
    for (int i = 0; i < ml.count; i++) {
        dtb_pos q;
        dtb_make_move(p, &ml.moves[i], &q);
        dtb_value slot;
        const dtb_wvalue v = dtb_solved_exact(s, dtb_solved_value_at(s, &q, &slot));
        const int d = dtb_wvalue_dtw(v);
        switch (dtb_wvalue_wdl(v)) {
        case DTB_LOSS: if (best_win < 0 || d + 1 < best_win) best_win = d + 1; break;
        case DTB_WIN: if (d + 1 > longest_loss) longest_loss = d + 1; break;
        case DTB_DRAW: draw = true; break;
        }
    }
    if (best_win >= 0)
        return best_win <= DTB_MAX_DTW ? dtb_wvalue_win(best_win) : DTB_WVALUE_DRAW;
    if (draw)
        return DTB_WVALUE_DRAW;
    return dtb_wvalue_loss(longest_loss < 0 ? 0 : longest_loss);
}

#define CHUNK 65536

/* Whether the stored value disagrees with the derived one: exactly, or in its result only
 * (stand-in distances: the derived distance follows from them, not from the game). */
static inline bool differs(dtb_wvalue derived, dtb_wvalue stored, bool results)
{
    return results ? dtb_wvalue_wdl(derived) != dtb_wvalue_wdl(stored) : derived != stored;
}

static uint64_t check_table(const dtb_solved *s, const dtb_solved_table *t, dtb_check_report report,
                            void *user, uint64_t limit, bool results);

uint64_t dtb_check_table(const dtb_solved *s, const dtb_solved_table *t, dtb_check_report report,
                         void *user, uint64_t limit)
{
    return check_table(s, t, report, user, limit, false);
}

uint64_t dtb_check_table_results(const dtb_solved *s, const dtb_solved_table *t,
                                 dtb_check_report report, void *user, uint64_t limit)
{
    return check_table(s, t, report, user, limit, true);
}

static uint64_t check_table(const dtb_solved *s, const dtb_solved_table *t, dtb_check_report report,
                            void *user, uint64_t limit, bool results)
{
    const uint64_t n = dtb_index_size(t->index);
    const uint64_t nchunks = (n + CHUNK - 1) / CHUNK;
    uint64_t bad = 0, reported = 0;
    /* Chunks in parallel; reports in index order, chunk by chunk (ordered). */
#pragma omp parallel for schedule(dynamic, 1) ordered reduction(+ : bad)
    for (uint64_t c = 0; c < nchunks; c++) {
        uint64_t first_bad = UINT64_MAX, chunk_bad = 0;
        const uint64_t end = (c + 1) * CHUNK < n ? (c + 1) * CHUNK : n;
        for (uint64_t i = c * CHUNK; i < end; i++) {
            dtb_pos p;
            dtb_index_pos(t->index, i, &p);
            if (differs(dtb_check_derive(s, &p), dtb_solved_exact_at(s, t, i), results)) {
                if (!chunk_bad)
                    first_bad = i;
                chunk_bad++;
            }
        }
        bad += chunk_bad;
#pragma omp ordered
        if (chunk_bad && report) {
            /* Re-walk the chunk serially to report each mismatch in order. */
            for (uint64_t i = first_bad; i < end && reported < limit; i++) {
                dtb_pos p;
                dtb_index_pos(t->index, i, &p);
                const dtb_wvalue d = dtb_check_derive(s, &p), stored = dtb_solved_exact_at(s, t, i);
                if (differs(d, stored, results)) {
                    report(user, t, i, stored, d);
                    reported++;
                }
            }
        }
    }
    return bad;
}
