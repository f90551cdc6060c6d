// The Linux calls that the C library's Swift module does not declare, for the
// platform layer alone. Header only: nothing to link, and nothing looked up at
// run time, so a statically linked tool has them too. Empty on other systems.
#if defined(__linux__)
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

// RENAME_NOREPLACE from <linux/fs.h>: fail with EEXIST rather than replace the target.
#define SHAREQUEUE_RENAME_NOREPLACE 1u

// renameat2 through syscall(2), which is variadic and so out of Swift's reach:
// the C library's own renameat2 is a GNU extension that older C libraries lack.
// A kernel without the call fails with ENOSYS; a file system without the flag, with EINVAL.
static inline int sharequeue_renameat2(int fromDirectory, const char *from, int toDirectory, const char *to, unsigned int flags) {
#if defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, fromDirectory, from, toDirectory, to, flags);
#else
    errno = ENOSYS;
    return -1;
#endif
}

// dup3 through syscall(2), for the same reason: dup2 with close-on-exec set at once,
// so that no child started meanwhile by another thread inherits the descriptor.
static inline int sharequeue_dup3(int from, int to, int flags) {
    return (int)syscall(SYS_dup3, from, to, flags);
}

#if defined(__GLIBC__)
// glibc's mallopt, M_TRIM_THRESHOLD and M_TOP_PAD, which <malloc.h> declares.
#include <malloc.h>
#endif
#endif
