/*
 * floor: the least work any correct file-locked append queue must do on this
 * machine, so that ShareQueue's benchmark can quote its figures as ratios
 * measured in the same run (absolute times drift on shared machines).
 * `share-stress bench` compiles it with the C compiler (cc -O2) and checks that
 * it links against libc alone: linked against the Swift runtime, it would start
 * twice as slowly and flatter every ratio taken against it.
 *
 *   floor append FILE N [sync]        one process appends N records of 128 bytes,
 *                                     each under flock: lock, write, (fdatasync), unlock
 *   floor append FILE N unlocked-sync the same, with fdatasync after the unlock, so that
 *                                     producers appending at once share flushes
 *   floor append FILE N MODE START    the same, waiting first until the monotonic clock reads
 *                                     START seconds, so that processes begin at once; prints the
 *                                     count and the clock's readings at the start and at the end
 *   floor format DIR N START [BYTES]  the format's floor: what an append to a ShareQueue queue
 *                                     must do besides, each record under the producers' lock (flock
 *                                     of DIR itself, then of DIR/append.lock):
 *                                     lstat DIR/pending.log (a drain may have sealed it), read its
 *                                     last KiB if another process wrote last (a producer may have
 *                                     died mid-write), write, unlock, fdatasync; started as above.
 *                                     Records are BYTES long (default 128, at most 4096), so that
 *                                     the floor can store as much per record as a tool did
 *   floor group DIR N START [BYTES]   the format's floor with group commit across processes: after
 *                                     the unlock, a process waits (flock LOCK_SH of DIR/sync.lock)
 *                                     while another syncs, and skips its own fdatasync if a sync of
 *                                     the same file began after its write; otherwise it syncs holding
 *                                     LOCK_EX and writes down the file and when that sync began.
 *                                     ShareQueue does not do this: it is here to measure whether it would pay
 *   floor append1 FILE                one record, for timing a whole process
 *   floor drain FILE OUT              under the lock, copy FILE to OUT in 64 KiB
 *                                     reads, fsync OUT, truncate FILE
 *
 * Each mode prints one line: the count and the seconds it took (or, given START, when it began and ended).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double seconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static int fail(const char *what) {
    perror(what);
    return 74;
}

/* Sleeps until the monotonic clock reads `at` seconds. */
static int start_at_time(double at) {
    struct timespec until = { (time_t)at, (long)((at - (double)(time_t)at) * 1e9) };
    int slept;
    while ((slept = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL)) == EINTR) {}
    return slept;
}

static int sync_data(int fd) {
#if defined(__APPLE__)
    return fsync(fd);
#else
    return fdatasync(fd);
#endif
}

/* One record under the lock; the shape every locked append shares.
 * durable: 1 syncs under the lock, 2 after the unlock. */
static int append_record(int fd, const char *record, size_t length, int durable) {
    if (flock(fd, LOCK_EX) != 0) return -1;
    int ok = write(fd, record, length) == (ssize_t)length && (durable != 1 || sync_data(fd) == 0);
    flock(fd, LOCK_UN);
    if (ok && durable == 2) ok = sync_data(fd) == 0;
    return ok ? 0 : -1;
}

/* When a sync of the file began, as group commit writes it down in sync.lock: the file's
 * inode and the monotonic clock in nanoseconds. */
struct sync_mark { unsigned long long inode, began; };

static unsigned long long nanoseconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
}

/* Whether sync.lock says a sync of `inode` began after `written`. */
static int synced_since(int sync_lock, unsigned long long inode, unsigned long long written) {
    struct sync_mark mark = { 0, 0 };
    return pread(sync_lock, &mark, sizeof mark, 0) == (ssize_t)sizeof mark && mark.inode == inode && mark.began > written;
}

/* Makes a record written at `written` durable, sharing a sync another process began after it. */
static int group_sync(int sync_lock, int fd, unsigned long long inode, unsigned long long written) {
    int ok = flock(sync_lock, LOCK_SH) == 0;
    if (ok && !synced_since(sync_lock, inode, written)) {
        ok = flock(sync_lock, LOCK_EX) == 0;
        if (ok && !synced_since(sync_lock, inode, written)) {
            struct sync_mark mark = { inode, nanoseconds_now() };
            ok = sync_data(fd) == 0 && pwrite(sync_lock, &mark, sizeof mark, 0) == (ssize_t)sizeof mark;
        }
    }
    flock(sync_lock, LOCK_UN);
    return ok ? 0 : -1;
}

/* `floor format` and, with `group`, `floor group`: see the top of this file. */
static int format_appends(const char *directory, long count, double start_at, size_t length, int group) {
    static char record[4096];
    memset(record, 'r', length);
    record[length - 1] = '\n';
    int folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (folder < 0) return fail("open");
    int lock = openat(folder, "append.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    int fd = openat(folder, "pending.log", O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    int sync_lock = group ? openat(folder, "sync.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600) : -1;
    struct stat opened;
    if (lock < 0 || fd < 0 || (group && sync_lock < 0) || fstat(fd, &opened) != 0) return fail("openat");
    if (start_at_time(start_at) != 0) return fail("clock_nanosleep");
    char tail[1024];
    off_t own_end = -1;
    double start = seconds_now();
    for (long i = 0; i < count; i++) {
        struct stat status;
        if (flock(folder, LOCK_EX) != 0 || flock(lock, LOCK_EX) != 0) return fail("flock");
        if (fstatat(folder, "pending.log", &status, AT_SYMLINK_NOFOLLOW) != 0) return fail("fstatat");
        if (status.st_size > 0 && status.st_size != own_end) {
            size_t tail_length = status.st_size < (off_t)sizeof tail ? (size_t)status.st_size : sizeof tail;
            if (pread(fd, tail, tail_length, status.st_size - (off_t)tail_length) != (ssize_t)tail_length) return fail("pread");
        }
        if (write(fd, record, length) != (ssize_t)length) return fail("write");
        own_end = status.st_size + (off_t)length;
        flock(lock, LOCK_UN);
        flock(folder, LOCK_UN);
        if (group ? group_sync(sync_lock, fd, (unsigned long long)opened.st_ino, nanoseconds_now()) != 0 : sync_data(fd) != 0) return fail("fdatasync");
    }
    printf("%ld %.6f %.6f\n", count, start, seconds_now());
    return 0;
}

int main(int argc, char **argv) {
    char record[128];
    memset(record, 'r', sizeof record);
    record[sizeof record - 1] = '\n';

    if (argc >= 4 && strcmp(argv[1], "append") == 0) {
        long count = atol(argv[3]);
        int durable = argc < 5 ? 0 : strcmp(argv[4], "sync") == 0 ? 1 : strcmp(argv[4], "unlocked-sync") == 0 ? 2 : 0;
        int fd = open(argv[2], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) return fail("open");
        if (argc >= 6 && start_at_time(atof(argv[5])) != 0) return fail("clock_nanosleep");
        double start = seconds_now();
        for (long i = 0; i < count; i++) {
            if (append_record(fd, record, sizeof record, durable) != 0) return fail("append");
        }
        if (argc >= 6) printf("%ld %.6f %.6f\n", count, start, seconds_now());
        else printf("%ld %.6f\n", count, seconds_now() - start);
        return 0;
    }
    if (argc >= 5 && (strcmp(argv[1], "format") == 0 || strcmp(argv[1], "group") == 0)) {
        size_t length = argc >= 6 ? (size_t)atol(argv[5]) : sizeof record;
        if (length < 1 || length > 4096) {
            fprintf(stderr, "a record is 1 to 4096 bytes\n");
            return 64;
        }
        return format_appends(argv[2], atol(argv[3]), atof(argv[4]), length, strcmp(argv[1], "group") == 0);
    }
    if (argc >= 3 && strcmp(argv[1], "append1") == 0) {
        int fd = open(argv[2], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) return fail("open");
        return append_record(fd, record, sizeof record, 0) == 0 ? 0 : fail("append");
    }
    if (argc >= 4 && strcmp(argv[1], "drain") == 0) {
        int queue = open(argv[2], O_RDWR | O_CLOEXEC);
        int out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (queue < 0 || out < 0) return fail("open");
        static char chunk[65536];
        double start = seconds_now();
        if (flock(queue, LOCK_EX) != 0) return fail("flock");
        long long total = 0;
        ssize_t n;
        while ((n = read(queue, chunk, sizeof chunk)) > 0) {
            if (write(out, chunk, (size_t)n) != n) return fail("write");
            total += n;
        }
        if (n < 0) return fail("read");
        if (fsync(out) != 0) return fail("fsync");
        if (ftruncate(queue, 0) != 0) return fail("ftruncate");
        flock(queue, LOCK_UN);
        printf("%lld %.6f\n", total, seconds_now() - start);
        return 0;
    }
    fprintf(stderr, "usage: floor append FILE N [sync|unlocked-sync [START]] | format|group DIR N START [BYTES] | append1 FILE | drain FILE OUT\n");
    return 64;
}
