/* `dtbprobe serve`: the command line of the HTTP server (probe/server/server.h). */
#ifndef DTB_CLI_SERVE_H
#define DTB_CLI_SERVE_H

#define DTBPROBE_SERVE_SYNOPSIS \
    "[--tables DIR] [--bind ADDR] [--port P] [--threads T] [--cache MIB] [--timeout S] [--per-address N] [--web DIR]"

/* Runs `dtbprobe serve` with the words after "serve"; returns the exit status (0 after SIGINT or
 * SIGTERM, 1 bad input or data, 2 usage). Prints the address to open on stdout. */
int dtbprobe_serve_main(int argc, char **argv);

#endif
