/*
 * fsync_delay.c: LD_PRELOAD shim that emulates slow durable storage.
 *
 * Every durability call (fsync, fdatasync, syncfs, msync with MS_SYNC) and every write to a
 * descriptor opened with O_SYNC or O_DSYNC (write, pwrite, pwrite64, writev, pwritev,
 * pwritev64, pwritev2) gets a fixed extra delay of FSYNC_DELAY_US microseconds after the real
 * call returns.  sync_file_range is not a durability call and is left alone.
 *
 * If FSYNC_COUNT_FILE names a file of at least 8 bytes, the shim also counts those calls
 * there (a shared 64-bit counter, mmap'ed, atomically incremented), so the benchmark
 * harness can read "fsyncs" the same way for every server.
 *
 * Build: cc -shared -fPIC -O2 -o fsync_delay.so fsync_delay.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static long delay_us = -1;          /* -1: not initialised yet */
static volatile uint64_t *counter;  /* NULL: not counting */

static void shim_init(void) {
    if (__atomic_load_n(&delay_us, __ATOMIC_ACQUIRE) >= 0) return;
    const char *d = getenv("FSYNC_DELAY_US");
    long v = d ? atol(d) : 0;
    const char *cf = getenv("FSYNC_COUNT_FILE");
    if (cf && *cf) {
        int fd = open(cf, O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p != MAP_FAILED) counter = (volatile uint64_t *)p;
            close(fd);
        }
    }
    __atomic_store_n(&delay_us, v < 0 ? 0 : v, __ATOMIC_RELEASE);
}

static int shim_active(void) {
    shim_init();
    return delay_us > 0 || counter != NULL;
}

static void shim_sync_done(void) {
    int saved = errno;
    if (counter) __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    if (delay_us > 0) {
        struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    errno = saved;
}

static int is_sync_fd(int fd) {
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & (O_SYNC | O_DSYNC)) != 0;
}

#define REAL(name, ret, args)                                      \
    static ret(*real_##name) args;                                 \
    if (!real_##name) real_##name = (ret(*) args)dlsym(RTLD_NEXT, #name)

int fsync(int fd) {
    REAL(fsync, int, (int));
    int r = real_fsync(fd);
    if (shim_active()) shim_sync_done();
    return r;
}

int fdatasync(int fd) {
    REAL(fdatasync, int, (int));
    int r = real_fdatasync(fd);
    if (shim_active()) shim_sync_done();
    return r;
}

int syncfs(int fd) {
    REAL(syncfs, int, (int));
    int r = real_syncfs(fd);
    if (shim_active()) shim_sync_done();
    return r;
}

int msync(void *addr, size_t len, int flags) {
    REAL(msync, int, (void *, size_t, int));
    int r = real_msync(addr, len, flags);
    if ((flags & MS_SYNC) && shim_active()) shim_sync_done();
    return r;
}

ssize_t write(int fd, const void *buf, size_t n) {
    REAL(write, ssize_t, (int, const void *, size_t));
    ssize_t r = real_write(fd, buf, n);
    if (r >= 0 && shim_active() && is_sync_fd(fd)) shim_sync_done();
    return r;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL(pwrite, ssize_t, (int, const void *, size_t, off_t));
    ssize_t r = real_pwrite(fd, buf, n, off);
    if (r >= 0 && shim_active() && is_sync_fd(fd)) shim_sync_done();
    return r;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
    REAL(pwrite64, ssize_t, (int, const void *, size_t, off64_t));
    ssize_t r = real_pwrite64(fd, buf, n, off);
    if (r >= 0 && shim_active() && is_sync_fd(fd)) shim_sync_done();
    return r;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    REAL(writev, ssize_t, (int, const struct iovec *, int));
    ssize_t r = real_writev(fd, iov, cnt);
    if (r >= 0 && shim_active() && is_sync_fd(fd)) shim_sync_done();
    return r;
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
    REAL(pwritev, ssize_t, (int, const struct iovec *, int, off_t));
    ssize_t r = real_pwritev(fd, iov, cnt, off);
    if (r >= 0 && shim_active() && is_sync_fd(fd)) shim_sync_done();
    return r;
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off) {
    REAL(pwritev64, ssize_t, (int, const struct iovec *, int, off64_t));
    ssize_t r = real_pwritev64(fd, iov, cnt, off);
    if (r >= 0 && shim_active() && is_sync_fd(fd)) shim_sync_done();
    return r;
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags) {
    REAL(pwritev2, ssize_t, (int, const struct iovec *, int, off_t, int));
    ssize_t r = real_pwritev2(fd, iov, cnt, off, flags);
    /* RWF_DSYNC / RWF_SYNC make this one write durable. */
#ifdef RWF_DSYNC
    int per_call = (flags & (RWF_DSYNC | RWF_SYNC)) != 0;
#else
    int per_call = 0;
#endif
    if (r >= 0 && shim_active() && (per_call || is_sync_fd(fd))) shim_sync_done();
    return r;
}
