/* dtb_make_long_table FROM TO VARIANT MATERIAL DTW: copies table MATERIAL.dtw of FROM/VARIANT/ to
 * TO/VARIANT/ with its first quiet won position listed as a win in DTW plies (tests/long_table.h)
 * and prints that position's FEN. For tests/long_dtw.sh, which probes it through the command
 * line, the server and Python. */
#include "long_table.h"

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: dtb_make_long_table FROM TO VARIANT MATERIAL DTW\n");
        return 2;
    }
    char fen[DTB_FEN_MAX];
    dtb_error e;
    if (write_long_table(argv[1], argv[2], argv[3], argv[4], atoi(argv[5]), fen, sizeof fen, &e) !=
        DTB_OK) {
        fprintf(stderr, "dtb_make_long_table: %s\n", e.msg);
        return 1;
    }
    printf("%s\n", fen);
    return 0;
}
