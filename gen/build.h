/* Building a set of tables into a directory: dependency order, resume, solve, write, stats
 * (docs/DESIGN.md §4). The dtbgen CLI is a thin front end over this. Never prints: messages go to the
 * log callback. */
#ifndef DTB_BUILD_H
#define DTB_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "solve.h"
#include "solved.h"
#include "tablefile.h"
#include "tablewrite.h"

typedef enum dtb_build_event {
    DTB_BUILD_SKIP,     /* material already complete in the directory (loaded when needed) */
    DTB_BUILD_START,    /* solving starts */
    DTB_BUILD_PROGRESS, /* done / total positions of the pair being solved */
    DTB_BUILD_DONE,     /* solved and written; text is the stats JSON line */
} dtb_build_event;

/* Messages from the build. name is the material; text is extra (JSON stats for DONE). Called
 * from one thread at a time. */
typedef void (*dtb_build_log)(void *user, dtb_build_event ev, const char *name, uint64_t done,
                              uint64_t total, const char *text);

/* Other processes that solve with this one (gen/mpi_build.h): the build calls these instead of
 * solving alone, and tells them which finished tables to read from their files and which to
 * drop, so that every process reads the same solved tables. Each returns DTB_OK or a status
 * with a message naming the process at fault. */
typedef struct dtb_build_peers {
    void *ctx;
    /* Solves pair m into s as dtb_solve_pair does (the same values and stats). With out not
     * NULL the pair may stay split between the ranks instead (dtb_sliced_pair_split), *out
     * then set and the tables left in s with this rank's range only, until *out is freed: so a
     * kings-only pair split between the ranks is never gathered whole, and each rank writes
     * its blocks of the tables (dtb_build_write_pair). */
    dtb_status (*solve_pair)(void *ctx, dtb_solved *s, dtb_material m, bool lean,
                             dtb_sliced_pair **out, dtb_solve_stats stats[2],
                             dtb_solve_progress progress, void *user, dtb_error *e);
    /* Material m is read from its complete table file at path from now on (metric: DTW, or
     * WLD for a WLD-only table; a losses-only DTW file has its WLD file beside it), in place of
     * any values the peers hold of it. */
    dtb_status (*attached)(void *ctx, dtb_material m, const char *path, dtb_metric metric,
                           dtb_error *e);
    dtb_status (*dropped)(void *ctx, dtb_material m, dtb_error *e);
    /* The solvers of the levels of a pair solved in slices. */
    dtb_level_solvers levels;
} dtb_build_peers;

enum { DTB_SLICES_AUTO, DTB_SLICES_ALWAYS, DTB_SLICES_NEVER };

typedef struct dtb_build_options {
    const dtb_variant *variant;
    int pieces;                   /* materials of 2..pieces pieces */
    const dtb_material *only;     /* when not NULL: these materials (and what they need) only */
    int nonly;
    int side_max;                 /* > 0: materials of at most this many pieces a side only (a
                                     closed set: captures and promotions never add a piece) */
    const char *out_dir;          /* tables go to out_dir/<variant>/ */
    int threads;                  /* 0: OpenMP's default */
    uint64_t memory_budget;       /* bytes to stay within; 0: no limit. A build that needs more
                                     keeps its solved values in work files (dtb_build_budget) */
    uint64_t disk_budget;         /* bytes of disk the build may take where its work files go
                                     (its table files and work files); 0: what is free there.
                                     Less than it needs: pairs are solved in slices */
    const char *work_dir;         /* where work files go; NULL: out_dir/<variant>/. Given, the
                                     solved values go to work files whatever the budget */
    int zstd_level;               /* 0: the writer's default */
    bool read_finished;           /* finished tables that later steps read are read from their
                                     files (decoded on demand) instead of kept uncompressed in
                                     memory or work files; chosen by the build itself when the
                                     work files would not fit the disk */
    bool keep_solved;             /* keep every material in memory to the end, in list order
                                     (no dropping; for comparisons) */
    int dtw_byte_max;             /* 0: distances beyond a byte's go to long lists; 1..254: also
                                     those beyond this (dtb_solved_set_byte_max; for tests) */
    int dtw_pieces;               /* 0: DTW tables for every material; N >= 2: only for materials
                                     of up to N pieces, WLD only above (Kingsrow's choice, a
                                     smaller set). The build still solves exact distances; a
                                     WLD-only table it reads back stands in with
                                     dtb_solved_wld_as_dtw's, which keep every result */
    bool dtw_full;                /* DTW tables store every value (the form before format
                                     §8.7); false, the default: losses only (DTB_TABLE_LOSSES),
                                     2-2.6x smaller, wins found by a one-ply search */
    bool mtc;                     /* also the .mtc tables (docs/FORMAT.md §8.5): made with each
                                     pair, and a pair without them is not complete (solved
                                     again). Their working memory (a byte a position of the
                                     pair, 4 a position of a unit per thread) is not in the
                                     memory plan yet */
    const dtb_rules *rules;       /* also the rule-distance tables under these move-count rules
                                     (docs/FORMAT.md §8.6; NULL: none), made with each pair as
                                     .mtc tables are. Their bytes stay in memory beside the
                                     solved values while a later pair reads them (a byte a
                                     position, not in the memory plan yet) */
    int slices;                   /* DTB_SLICES_AUTO (0): a pair whose values do not fit the memory
                                     budget is solved in slices (dtb_solve_pair_sliced: two
                                     levels of men advancement live at a time) when it has men
                                     and kings; DTB_SLICES_ALWAYS: every such pair (tests,
                                     comparisons); DTB_SLICES_NEVER. Pairs solved in slices are
                                     read back from their files by later pairs */
    dtb_build_log log;
    void *user;
    const dtb_build_peers *peers; /* NULL: this process solves alone */
    int ranks;                    /* processes of the MPI job sharing this build (0 or 1: alone).
                                     More than one: every process reads the finished tables from
                                     its copy of their files (read_finished), none holds their
                                     values; the plan is each process's */
} dtb_build_options;

/* Under MPI, pairs of fewer positions than this (both members) are solved by rank 0 alone (a level of
 * theirs costs less than the messages that would share it); larger kings-only pairs are split
 * between the ranks (gen/mpi_lean.c). */
#define DTB_BUILD_SHARE_MIN_POSITIONS ((uint64_t)1 << 20)

/* Solves and writes every material the options ask for, skipping the complete ones. Crash-safe:
 * files appear whole or not at all, so rerunning after a kill resumes. Returns DTB_OK or a status
 * with a one-line message in *e. */
dtb_status dtb_build(const dtb_build_options *o, dtb_error *e);

/* Whether material m is within o's side_max (true when there is none). */
bool dtb_build_side_fits(const dtb_build_options *o, const dtb_material *m);

/* True when positions of material `from` can lead to positions of material `to` (or of its
 * colour flip) by moves, captures and promotions, for either side to move: to's pieces fit in
 * from's, men only fewer, per side. Transitive; a superset of the real relation, so every table
 * a table's values are derived from is among those it depends on. */
bool dtb_build_depends(const dtb_material *from, const dtb_material *to);

/* True when a position of `from` or of its colour flip reaches, in one move (a man move with or
 * without promotion, a capture), a position of `to` or of its colour flip, `to` not being from's
 * pair: per moving side, at most one man turned king, the other side's pieces at most fewer. A
 * superset of the real one-move relation (counts only), and a subset of dtb_build_depends:
 * solving from's pair reads exactly the pairs this is true for. */
bool dtb_build_exits(const dtb_material *from, const dtb_material *to);

/* Bytes of memory the planned build of these options needs at its peak: values and capture bits
 * of the materials in memory at each step (a pair leaves memory as soon as no later step reads
 * it; with keep_solved, never), plus the step's working memory (solver or table writer, both
 * estimated from what they allocate). Looks at out_dir for complete pairs, as dtb_build does
 * (out_dir NULL: everything to solve). UINT64_MAX when out of memory. */
uint64_t dtb_build_memory_needed(const dtb_build_options *o);

/* What a memory budget makes of a build's plan. */
typedef struct dtb_build_budget {
    uint64_t in_memory;   /* bytes at the peak with everything in memory (dtb_build_memory_needed) */
    uint64_t working;     /* bytes the largest step works with beyond the solved values: the
                             solver's unit state or the writer's buffers, and the base */
    uint64_t minimum;     /* the smallest budget the build accepts: working and a slack */
    bool use_work_files;  /* in_memory is over the budget: solved values go to work files */
    uint64_t work_files;  /* then: bytes of work files at the peak (disk the build needs) */
    uint64_t disk_free;   /* bytes free where the work files would go (dtb_build_plan_budget);
                             UINT64_MAX when unknown */
    uint64_t monitor_cap; /* with work files: the resident memory the build is kept under */
    bool read_finished;   /* finished tables read from their files (dtb_build_options): the
                             work files hold only the pair being solved (work_files then) */
    int lean_pairs;       /* kings-only pairs the budget has solved with the lean state */
    int sliced_pairs;     /* pairs the budget solves in slices (dtb_build_options.slices) */
    uint64_t sliced_positions; /* their positions (both members) */
    uint64_t slice_bytes; /* disk of the largest one's slice store (a projection), in
                             work_files */
    uint64_t lean_positions; /* their positions (both members) */
} dtb_build_budget;

/* The budget plan of the options (o->memory_budget; out_dir as dtb_build_memory_needed). */
dtb_status dtb_build_plan_budget(const dtb_build_options *o, dtb_build_budget *out, dtb_error *e);

/* The materials a build of o would solve (both members of each pair; those complete in
 * o->out_dir left out when it is set), into *out (free it); their number, -1 when out of memory. */
int dtb_build_to_solve(const dtb_build_options *o, dtb_material **out);

/* Called by dtb_build_walk for each material whose .dtw table (or, without one, .wld table:
 * loaded with stand-in distances, dtb_build_load_wld) is in the directory. When missing
 * is NULL, s holds m's table and every table its moves reach; else m cannot be checked, as
 * *missing (a material it or its loading needs) is absent, and s is NULL. */
typedef void (*dtb_build_visit)(void *user, const dtb_solved *s, dtb_material m,
                                const dtb_material *missing);

/* Loads the tables of the options' list (o->pieces, o->only) from o->out_dir in a
 * memory-saving order, dropping each once no later step reads it, and calls visit for each
 * present material as described there (first those that cannot be checked, in list order).
 * Memory: about what dtb_build_memory_needed says of a build, without the solver. DTB_OK, or
 * the status of a table that failed to load, with a message naming it. */
dtb_status dtb_build_walk(const dtb_build_options *o, dtb_build_visit visit, void *user,
                          dtb_error *e);

/* The writer's defaults with the fields that name a table of this build: variant v (name and
 * GameType), material (a name that must outlive the options), metric, its value encoding and the
 * index version above. Don't-care kind, flags and compression are left to the caller. */
dtb_table_write_options dtb_build_write_options(const dtb_variant *v, const char *material,
                                                dtb_metric metric);

/* Path of a material's table file: dir/<variant>/<material>.<metric>. */
void dtb_build_table_path(char *buf, size_t size, const char *dir, const dtb_variant *v,
                          const dtb_material *m, dtb_metric metric);

/* Adds material m to rl (the rule bytes by diagonal count, gen/rule_layers.h) with the rule
 * bytes of its table under rl's rules in dir/<variant>/ (every count layer it has), which must
 * have been solved with those rules' limits (DTB_E_MISMATCH otherwise; DTB_E_NOTFOUND without
 * the file). */
dtb_status dtb_build_load_rules(dtb_rule_layers *rl, const char *dir, dtb_material m,
                                dtb_error *e);

/* Reads the .mtc table of material m (size positions) from dir into mtc (size bytes; capture
 * positions hold whatever the writer filled in). DTB_E_NOTFOUND when absent; other statuses
 * for damaged files. */
dtb_status dtb_build_read_mtc(const char *dir, const dtb_variant *v, dtb_material m, uint64_t size,
                              dtb_value *mtc, dtb_error *e);

/* Loads the .dtw tables of material m and of its colour flip (each unless in s already) from
 * dir into s, exact: capture positions, stored as don't-care, are re-derived from their
 * successors (smaller materials); a table that stores its losses only (docs/FORMAT.md §8.7)
 * takes its draws and the places of its wins from the .wld table beside it, and each win's
 * distance from a search of its moves (dtb_solve_pair_wins), once both members' losses and
 * capture positions are in place. Every material the pair depends on must be in s already
 * (the promotion targets too, for a losses-only pair). DTB_E_NOTFOUND when a table is absent;
 * other statuses for damaged files or files that disagree; a failure leaves neither member it
 * added in s. */
dtb_status dtb_build_load(dtb_solved *s, const char *dir, dtb_material m, dtb_error *e);

/* Writes table t of s (loaded or solved: exact values and capture bits) to path as a DTW table
 * that stores every value (capture positions don't-care, long entries of quiet positions), the
 * file `dtbgen --dtw-store full` writes of it with these compression settings (block_positions
 * and zstd_level 0: the writer's defaults; threads 0: OpenMP's). For sets whose readers need the
 * full form (compact sets, gen/compact.c). The writer's statuses. */
dtb_status dtb_build_write_dtw_full(const dtb_solved *s, const dtb_solved_table *t,
                                    const char *path, uint32_t block_positions, int zstd_level,
                                    int threads, dtb_error *e);

/* dtb_build_load of a WLD-only table (dtb_build_options.dtw_pieces): its .wld file, each value
 * as dtb_solved_wld_as_dtw gives (the results exact, the distances stand-ins). */
dtb_status dtb_build_load_wld(dtb_solved *s, const char *dir, dtb_material m, dtb_error *e);

/* Whether a build of o writes m's DTW table (o->dtw_pieces). */
bool dtb_build_writes_dtw(const dtb_build_options *o, const dtb_material *m);

/* Writes the tables of pair m (each member's DTW table when the build writes one, then its WLD
 * table) into o's table directory from its values in s, or from sp when it was solved in slices
 * or split between ranks. Of a split pair every rank calls it (the team writes each table
 * together, gen/tablewrite.h); only rank 0's files are written. */
dtb_status dtb_build_write_pair(const dtb_build_options *o, const dtb_solved *s, dtb_material m,
                                const dtb_sliced_pair *sp, dtb_error *e);

/* Where the build's work files and slice stores go: o->work_dir, else the variant's table
 * directory under o->out_dir (written into dir). */
const char *dtb_build_work_dir(const dtb_build_options *o, char dir[4096]);

#endif
