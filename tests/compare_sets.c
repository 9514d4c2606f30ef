/* Two table sets of one variant compared position by position through libdtb (a check to run by
 * hand on sets too large for the test suite, e.g. a full set against its compact set; not a test).
 *
 * usage: dtb_compare_sets FULLDIR (OTHERDIR | --moves) [--pieces N] [--min-pieces M] [--sample K]
 *                         [--seed S] [--threads T] [--metrics wdl|both] [--material NAME ...]
 *
 * For every material of M..N pieces (default 2..the largest complete piece count of FULLDIR),
 * every position of its index (or K evenly random ones when --sample is given), white to move
 * as indexed and the same position colour-flipped (black to move): dtb_probe_wdl and
 * dtb_probe_dtw on both sets, which must both succeed and agree. With --moves instead of a
 * second set, each position's value and DTW in FULLDIR must equal the best of its moves' as
 * dtb_probe_moves ranks them from the positions after them (a loss in 0 without a move): the
 * one-ply check of dtbgen --check, by sample, for sets too large to check whole; positions with
 * a capture for the side to move are skipped there (their value is that rule already). Prints
 * one line per material and a total; exit 0 when everything agrees, 1 otherwise (the first
 * disagreements are printed with their FEN), 2 on usage errors. */
#define _POSIX_C_SOURCE 200809L

#include "dtb.h"

#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "index.h"
#include "material.h"
#include "movegen.h"
#include "splitmix.h"
#include "public_position.h"

static dtb_db *open_set(const char *dir)
{
    const char *dirs[1] = {dir};
    const dtb_options o = {.struct_size = sizeof(dtb_options), .paths = dirs, .npaths = 1, .cache_bytes = 256ull << 20};
    dtb_db *db;
    const dtb_status s = dtb_open(&o, &db);
    if (s != DTB_OK) {
        fprintf(stderr, "dtb_compare_sets: %s: %s\n", dir, dtb_strerror(s));
        return NULL;
    }
    return db;
}

/* 0 when p answers the same in a and b (both OK), else 1 with the difference in why. Without
 * dtw only the WDL probes (a set converted one metric at a time). */
static int compare(dtb_db *a, dtb_db *b, const dtb_position *p, bool dtw, char *why, size_t size)
{
    dtb_wdl wa = DTB_DRAW, wb = DTB_DRAW, da_w = wa, db_w = wa;
    int da = -1, db = -1;
    const dtb_status s1 = dtb_probe_wdl(a, p, 0, &wa), s2 = dtb_probe_wdl(b, p, 0, &wb);
    if (!dtw)
        da_w = db_w = wa, da = db = 0;
    const dtb_status s3 = dtw ? dtb_probe_dtw(a, p, 0, &da_w, &da) : DTB_OK;
    const dtb_status s4 = dtw ? dtb_probe_dtw(b, p, 0, &db_w, &db) : DTB_OK;
    if (s1 == DTB_OK && s2 == DTB_OK && s3 == DTB_OK && s4 == DTB_OK && wa == wb && da_w == db_w &&
        da == db && wa == da_w)
        return 0;
    char msg[DTB_MESSAGE_SIZE] = "";
    if (s1 || s3)
        dtb_last_error(a, msg, sizeof msg);
    else if (s2 || s4)
        dtb_last_error(b, msg, sizeof msg);
    snprintf(why, size, "wdl %d/%d dtw %d %d/%d %d status %d %d %d %d %s", wa, wb, da_w, da, db_w, db,
             s1, s2, s3, s4, msg);
    return 1;
}

/* 0 when p's value and DTW in a equal those its best move gives (dtb_probe_moves), else 1 with
 * the difference in why. */
static int check_moves(dtb_db *a, const dtb_position *p, char *why, size_t size)
{
    dtb_wdl w = DTB_DRAW;
    int d = -1, count = 0;
    dtb_ranked_move best[1];
    const dtb_status s1 = dtb_probe_dtw(a, p, 0, &w, &d);
    dtb_status s2 = dtb_probe_moves(a, p, 0, best, 1, &count);
    if (s2 == DTB_E_OVERFLOW) /* more than one move: best[0] is the first of the ranking */
        s2 = DTB_OK;
    const dtb_wdl bw = count ? best[0].wdl : DTB_LOSS;
    const int bd = count ? best[0].dtw : 0;
    if (s1 == DTB_OK && s2 == DTB_OK && w == bw && d == bd)
        return 0;
    char msg[DTB_MESSAGE_SIZE] = "";
    if (s1 || s2)
        dtb_last_error(a, msg, sizeof msg);
    snprintf(why, size, "stored wdl %d dtw %d, best of %d moves wdl %d dtw %d, status %d %d %s", w, d,
             count, bw, bd, s1, s2, msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: dtb_compare_sets FULLDIR (OTHERDIR | --moves) [--pieces N] "
                        "[--min-pieces M] [--sample K] [--seed S] [--threads T] [--metrics wdl|both] "
                        "[--material NAME ...]\n");
        return 2;
    }
    const bool moves = strcmp(argv[2], "--moves") == 0;
    int pieces = 0, min_pieces = 2, threads = 0;
    bool dtw = true; /* --metrics wdl: WDL probes only (OTHERDIR may hold WLD tables only) */
    uint64_t sample = 0, seed = 1;
    const char *only[64]; /* --material: these materials only (and their colour flips) */
    int nonly = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--material") == 0 && nonly < 64)
            only[nonly++] = argv[i + 1];
        else if (strcmp(argv[i], "--pieces") == 0)
            pieces = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--min-pieces") == 0)
            min_pieces = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sample") == 0)
            sample = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--metrics") == 0 && strcmp(argv[i + 1], "wdl") == 0)
            dtw = false;
        else if (strcmp(argv[i], "--metrics") == 0 && strcmp(argv[i + 1], "both") == 0)
            dtw = true;
        else {
            fprintf(stderr, "dtb_compare_sets: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    dtb_db *a = open_set(argv[1]), *b = moves ? NULL : open_set(argv[2]);
    if (!a || (!moves && !b))
        return 1;
    if (!pieces)
        pieces = dtb_max_pieces(a, true);
    if (threads > 0)
        omp_set_num_threads(threads);
    dtb_board board;
    dtb_board_init(&board, dtb_variant_find(dtb_db_variant(a)));
    const int n = dtb_material_list(pieces, NULL, 0);
    dtb_material *list = malloc((size_t)n * sizeof *list);
    dtb_material_list(pieces, list, n);
    uint64_t total = 0, bad = 0;
    const double t0 = omp_get_wtime();
    for (int i = 0; i < n; i++) {
        if (dtb_material_pieces(&list[i]) < min_pieces)
            continue;
        bool wanted = nonly == 0;
        for (int k = 0; k < nonly && !wanted; k++) {
            char name[DTB_MATERIAL_NAME_MAX], flip[DTB_MATERIAL_NAME_MAX];
            const dtb_material f = dtb_material_flip(list[i]);
            dtb_material_name(&list[i], name, sizeof name);
            dtb_material_name(&f, flip, sizeof flip);
            wanted = strcmp(only[k], name) == 0 || strcmp(only[k], flip) == 0;
        }
        if (!wanted)
            continue;
        dtb_index *ix;
        if (dtb_index_create(&board, list[i], &ix) != DTB_OK)
            continue;
        const uint64_t size = dtb_index_size(ix), count = sample && sample < size ? sample : size;
        uint64_t mine_bad = 0, probed = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : mine_bad, probed)
        for (uint64_t k = 0; k < count; k++) {
            uint64_t st = seed ^ (k * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)i << 48);
            const uint64_t at = count == size ? k : dtb_splitmix64(&st) % size;
            dtb_pos p, f;
            dtb_index_pos(ix, at, &p);
            dtb_pos_flip(&board, &p, &f);
            if (!dtb_pos_pieces(&p, DTB_BLACK))
                continue;
            for (int side = 0; side < 2; side++) {
                /* A capture position's value is the best of its captures by construction (the
                 * files hold none; the probe searches them): --moves would check nothing there. */
                if (moves && dtb_has_capture(&board, side ? &f : &p))
                    continue;
                const dtb_position x = pub(side ? &f : &p);
                char why[400];
                probed++;
                if (moves ? check_moves(a, &x, why, sizeof why) : compare(a, b, &x, dtw, why, sizeof why)) {
                    if (mine_bad++ < 5) {
                        char fen[DTB_FEN_MAX];
                        dtb_fen_write(&board, side ? &f : &p, fen, sizeof fen);
#pragma omp critical
                        printf("MISMATCH %s: %s\n", fen, why);
                    }
                }
            }
        }
        char name[DTB_MATERIAL_NAME_MAX];
        dtb_material_name(&list[i], name, sizeof name);
        printf("%-10s %12llu probed %llu mismatches\n", name, (unsigned long long)probed,
               (unsigned long long)mine_bad);
        fflush(stdout);
        total += probed;
        bad += mine_bad;
        dtb_index_free(ix);
    }
    printf("total %llu positions (both sides to move) of %d..%d pieces, %llu mismatches, %.1f s\n",
           (unsigned long long)total, min_pieces, pieces, (unsigned long long)bad,
           omp_get_wtime() - t0);
    free(list);
    dtb_close(a);
    dtb_close(b);
    return bad ? 1 : 0;
}
