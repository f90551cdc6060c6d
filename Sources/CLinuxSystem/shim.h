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

// pipe2 through syscall(2): the C library declares it only for _GNU_SOURCE, which
// Swift's C module is not built with.
static inline int sharequeue_pipe2(int fds[2], int flags) {
    return (int)syscall(SYS_pipe2, fds, flags);
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

// The calling thread's own timer for lock waits, which sends SIGURG to that thread
// alone (SIGEV_THREAD_ID is Linux's own). Made at the thread's first wait and kept,
// since a wait for a busy lock is frequent and making a timer costs three system calls;
// deleted when the thread ends, and forgotten in the child of a fork, which has no timers.
// (A child made without the C library's fork handlers, by _Fork or clone, keeps the id:
// arming it then fails, and the wait polls, unless the child made a timer of that id.)

// The key that holds each thread's timer, with whether it could be made. Kept in a
// function's statics: Swift does not define a header's static globals.
struct sharequeue_timer_key { pthread_key_t key; int made; };

static inline struct sharequeue_timer_key *sharequeue_timer_key(void) {
    static struct sharequeue_timer_key key;
    return &key;
}

// The key holds a timer's id plus one, since a timer's id may be 0 and a key's value 0 is none.
static void sharequeue_delete_timer(void *slot) { timer_delete((timer_t)((char *)slot - 1)); }

static void sharequeue_forget_timer_in_child(void) { pthread_setspecific(sharequeue_timer_key()->key, NULL); }

static void sharequeue_make_timer_key(void) {
    struct sharequeue_timer_key *key = sharequeue_timer_key();
    if (pthread_key_create(&key->key, sharequeue_delete_timer) != 0) return;
    key->made = pthread_atfork(NULL, NULL, sharequeue_forget_timer_in_child) == 0;
}

// The calling thread's timer, made disarmed if it has none yet: 0, or -1 with errno.
static inline int sharequeue_thread_timer(timer_t *timer) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    struct sharequeue_timer_key *key = sharequeue_timer_key();
    if (pthread_once(&once, sharequeue_make_timer_key) != 0 || !key->made) {
        errno = ENOMEM;
        return -1;
    }
    void *slot = pthread_getspecific(key->key);
    if (slot != NULL) {
        *timer = (timer_t)((char *)slot - 1);
        return 0;
    }
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = 4; // SIGEV_THREAD_ID
    event.sigev_signo = SIGURG;
    event._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_MONOTONIC, &event, timer) != 0) return -1;
    if (pthread_setspecific(key->key, (char *)*timer + 1) != 0) {
        int error = errno;
        timer_delete(*timer);
        errno = error;
        return -1;
    }
    return 0;
}

// Arms `timer` to fire first after `first` seconds, then every `every` seconds; `previous`
// receives its setting before, for timer_settime to restore when the wait ends: a wait
// may run inside another's (in code the outer one calls), whose ticks must go on after it.
static inline int sharequeue_arm_timer(timer_t timer, double first, double every, struct itimerspec *previous) {
    struct itimerspec when;
    when.it_value.tv_sec = (time_t)first;
    when.it_value.tv_nsec = (long)((first - (double)(time_t)first) * 1e9);
    when.it_interval.tv_sec = (time_t)every;
    when.it_interval.tv_nsec = (long)((every - (double)(time_t)every) * 1e9);
    return timer_settime(timer, 0, &when, previous);
}

#if defined(__GLIBC__)
// glibc's mallopt, M_TRIM_THRESHOLD and M_TOP_PAD, which <malloc.h> declares.
#include <malloc.h>
#endif
#endif
