/*
 * peak-memory FILE COMMAND [ARGUMENT...]
 *
 * Runs COMMAND as a child of this small process and writes the peak resident memory of the
 * child, in KiB, to FILE; exits with the child's status (128 + the signal that ended it).
 *
 * Why not wait4 on a child of share-stress itself: a child made with posix_spawn (vfork)
 * runs in its parent's memory until it calls exec, and Linux counts that memory's high-water
 * mark as the child's own, so every tool share-stress starts reports at least share-stress's
 * size (about 32 MiB). A child forked from this process starts from this process's size,
 * about 1 MiB. Plain C, linked against libc alone, like the floor.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: peak-memory FILE COMMAND [ARGUMENT...]\n");
        return 64;
    }
    pid_t child = fork();
    if (child < 0) { perror("fork"); return 71; }
    if (child == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(child, &status, 0, &usage) < 0) { perror("wait4"); return 71; }
#ifdef __APPLE__
    long kibibytes = usage.ru_maxrss / 1024; /* bytes there */
#else
    long kibibytes = usage.ru_maxrss;
#endif
    FILE *out = fopen(argv[1], "w");
    if (!out || fprintf(out, "%ld\n", kibibytes) < 0 || fclose(out) != 0) { perror(argv[1]); return 74; }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
