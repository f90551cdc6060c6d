// The Linux calls that the C library's Swift module does not declare, for the
// platform layer alone. Header only: nothing to link, and nothing looked up at
// run time, so a statically linked tool has them too. Empty on other systems.
#if defined(__linux__)
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
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

// A wait for a lock asleep in flock(2), which only a signal ends early: the calling
// thread's own timer sends it SIGURG, whose default disposition is to do nothing, so
// that a stray one harms no one. Installed only over that default, a handler that
// does nothing and no SA_RESTART make the signal end the blocked call with EINTR.
static void sharequeue_interrupted(int signal) { (void)signal; }

// Whether SIGURG now ends a blocked call of the thread it is sent to: 1 once the
// handler is installed (or already was), 0 if the process handles or ignores SIGURG itself.
static inline int sharequeue_take_interrupting_signal(void) {
    struct sigaction current;
    if (sigaction(SIGURG, NULL, &current) != 0) return 0;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == sharequeue_interrupted) return 1;
    if ((current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_DFL) return 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = sharequeue_interrupted;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGURG, &action, NULL) == 0;
}

// Lets SIGURG reach the calling thread, which may have inherited a mask that blocks
// it; `saved` receives the mask before, for pthread_sigmask(SIG_SETMASK) to restore.
static inline int sharequeue_allow_interrupting_signal(sigset_t *saved) {
    sigset_t urgent;
    sigemptyset(&urgent);
    sigaddset(&urgent, SIGURG);
    return pthread_sigmask(SIG_UNBLOCK, &urgent, saved);
}

// A timer that sends SIGURG to the calling thread alone, first after `first` seconds,
// then every `every` seconds, until deleted. SIGEV_THREAD_ID is Linux's own.
static inline int sharequeue_start_interrupting_timer(double first, double every, timer_t *timer) {
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = 4; // SIGEV_THREAD_ID
    event.sigev_signo = SIGURG;
    event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_MONOTONIC, &event, timer) != 0) return -1;
    struct itimerspec when;
    when.it_value.tv_sec = (time_t)first;
    when.it_value.tv_nsec = (long)((first - (double)(time_t)first) * 1e9);
    when.it_interval.tv_sec = (time_t)every;
    when.it_interval.tv_nsec = (long)((every - (double)(time_t)every) * 1e9);
    if (timer_settime(*timer, 0, &when, NULL) != 0) {
        int error = errno;
        timer_delete(*timer);
        errno = error;
        return -1;
    }
    return 0;
}

#if defined(__GLIBC__)
// glibc's mallopt, M_TRIM_THRESHOLD and M_TOP_PAD, which <malloc.h> declares.
#include <malloc.h>
#endif
#endif
