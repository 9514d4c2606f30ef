// engine_example.cpp: dtb from C++ (docs/ENGINES.md, "From C++"), as an engine uses it: default
// options, dtb_warm, a ranked root with the engine's move matched, cache-only probes in a toy
// search, the probe counters. Compiled by tests/cxx_header.sh as C++11, 17 and 20 with g++ and
// clang++ (-Wall -Wextra -pedantic-errors -Werror) and run. usage: engine_example TABLES_DIR
#include <cstdio>
#include <vector>

#include <dtb.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    const char *dirs[] = {argv[1]};
    dtb_options o = DTB_OPTIONS_INIT; // defaults: a cache sized for the tables, one loader thread
    o.paths = dirs;
    o.npaths = 1;
    dtb_db *db = nullptr;
    if (dtb_open(&o, &db) != DTB_OK)
        return 1;
    uint64_t warm = 0;
    const dtb_status ws = dtb_warm(db, dtb_max_pieces(db, false), 0, &warm);
    std::printf("cache %llu bytes, warm %llu (%s)\n", (unsigned long long)dtb_cache_budget(db),
                (unsigned long long)warm, dtb_strerror(ws));
    if (ws != DTB_OK)
        return 1; // the default cache holds every table found

    // The engine's position, from its own square lists: white kings 46 and 47, black king 5.
    const int wk[] = {46, 47}, bk[] = {5};
    dtb_position root;
    char why[DTB_MESSAGE_SIZE];
    if (dtb_position_from_squares(db, DTB_SIDE_WHITE, nullptr, 0, wk, 2, nullptr, 0, bk, 1, &root,
                                  why, sizeof why) != DTB_OK) {
        std::fprintf(stderr, "%s\n", why);
        return 1;
    }
    // At the root: every move ranked; the engine's own choice (46-41) found among them.
    std::vector<dtb_ranked_move> moves(64);
    int n = 0;
    if (dtb_probe_moves(db, &root, 0, moves.data(), (int)moves.size(), &n) != DTB_OK || n == 0)
        return 1;
    std::printf("best %s: %s, dtw %d\n", moves[0].move.text,
                moves[0].wdl == DTB_WIN ? "win" : moves[0].wdl == DTB_DRAW ? "draw" : "loss",
                moves[0].dtw);
    dtb_pdn_move mine;
    if (dtb_find_move(db, &root, 46, 41, nullptr, 0, &mine) != DTB_OK)
        return 1;
    for (int i = 0; i < n; i++)
        if (dtb_move_matches(&moves[i].move, mine.from, mine.to, nullptr, 0))
            std::printf("engine move %s ranked %d of %d\n", mine.text, i + 1, n);

    // In the search: cache-only probes of the positions after each root move.
    for (int i = 0; i < n; i++) {
        dtb_position child;
        dtb_wdl wdl;
        if (dtb_position_after(db, &root, &moves[i].move, &child) != DTB_OK)
            return 1;
        const dtb_status s = dtb_probe_wdl(db, &child, DTB_CACHE_ONLY, &wdl);
        if (s != DTB_OK && s != DTB_E_NOTCACHED && s != DTB_E_GAMEOVER)
            return 1;
    }
    dtb_cache_stats st = DTB_CACHE_STATS_INIT;
    if (dtb_get_cache_stats(db, &st) != DTB_OK)
        return 1;
    std::printf("probes %llu, hits %llu, not cached %llu\n", (unsigned long long)st.probes,
                (unsigned long long)st.probe_hits, (unsigned long long)st.probe_notcached);
    dtb_close(db);
    return st.probes == (uint64_t)n && st.probe_hits == st.probes ? 0 : 1;
}
