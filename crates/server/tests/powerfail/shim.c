/*
 * shim.c: LD_PRELOAD shim that journals what a power cut could keep of a directory tree.
 *
 * Loaded into a real process, it watches every file under POWERFAIL_DIR (an absolute,
 * canonical path) and appends one line per durability-relevant event to POWERFAIL_JOURNAL
 * (opened with O_APPEND; one write() per line, so a SIGKILL never tears a line). Files
 * and directories are named by inode in content events, by path in name events:
 *
 *   S ino size tk       fsync/fdatasync of a file returned; `size` is its size before
 *                       the call (everything written before the call is durable), `tk`
 *                       the ticket taken before the call
 *   Z ino off len tk    a write over bytes [off, off+len) of the file, all zeros before
 *   X ino off len tk hex  the same, the bytes before in hex (at most 4096 a line)
 *   D path              fsync/fdatasync of a directory returned
 *   O ino path          open with O_CREAT or O_TRUNC returned (a new name, or a truncation)
 *   R ino old<TAB>new   rename
 *   L ino old<TAB>new   hard link
 *   U ino path          unlink
 *   T ino size          truncate/ftruncate (informational)
 *   W ino off len flags sync_file_range (informational: it syncs no metadata, so an
 *                       append it covers is not durable, see sync_file_range(2))
 *   M len flags         msync (informational)
 *
 * Tickets come from one counter: a write's ticket is taken before the write, a sync's
 * before the sync, so a write whose ticket is above every completed sync's of its file
 * started after the last sync started, and no sync guarantees it. Only overwrites of
 * existing bytes are journaled (appends past the end need no undo: the size model drops
 * them), with the bytes they replace, read before the write.
 *
 * Before a name is removed (unlink, or rename over an existing file) the file is
 * hard-linked into POWERFAIL_GRAVE, so its content stays available if the power cut
 * undoes the removal. Name events and directory syncs run under one mutex, together with
 * their journal line, so the journal orders them as they happened; only the last one
 * before a SIGKILL may have happened without its line (the model then treats it as not
 * durable, which is a legal outcome). File syncs take no lock. Paths of descriptors come
 * from /proc/self/fd, so no descriptor table is kept, and nothing here allocates memory
 * after start-up.
 *
 * Build: cc -shared -fPIC -O2 -o powerfail.so shim.c -ldl -lpthread
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static char prefix[PATH_MAX];
static size_t prefix_len;
static char grave[PATH_MAX];
static int journal_fd = -1;
static uint64_t grave_seq;
static uint64_t ticket;
static pthread_mutex_t ns_lock = PTHREAD_MUTEX_INITIALIZER;

#define REAL(name, ret, args)                                                     \
    static ret(*real_##name) args;                                                \
    if (!__atomic_load_n(&real_##name, __ATOMIC_ACQUIRE))                         \
        __atomic_store_n(&real_##name, (ret(*) args)dlsym(RTLD_NEXT, #name),      \
                         __ATOMIC_RELEASE)

static int raw_link(const char *a, const char *b) {
    REAL(link, int, (const char *, const char *));
    return real_link(a, b);
}

__attribute__((constructor)) static void powerfail_init(void) {
    const char *d = getenv("POWERFAIL_DIR");
    const char *j = getenv("POWERFAIL_JOURNAL");
    const char *g = getenv("POWERFAIL_GRAVE");
    if (!d || !j || !g || strlen(d) >= PATH_MAX - 2 || strlen(g) >= PATH_MAX - 64) return;
    REAL(open, int, (const char *, int, ...));
    int fd = real_open(j, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    strcpy(prefix, d);
    prefix_len = strlen(prefix);
    while (prefix_len > 1 && prefix[prefix_len - 1] == '/') prefix[--prefix_len] = 0;
    strcpy(grave, g);
    __atomic_store_n(&journal_fd, fd, __ATOMIC_RELEASE);
}

static int active(void) { return __atomic_load_n(&journal_fd, __ATOMIC_ACQUIRE) >= 0; }

static int under_prefix(const char *p) {
    return strncmp(p, prefix, prefix_len) == 0 && (p[prefix_len] == '/' || p[prefix_len] == 0);
}

/* A line being built on the stack. */
struct line {
    char buf[2 * PATH_MAX + 2 * 4096 + 96];
    size_t n;
};

static void put_str(struct line *l, const char *s) {
    size_t k = strlen(s);
    if (l->n + k + 2 > sizeof l->buf) k = sizeof l->buf - l->n - 2;
    memcpy(l->buf + l->n, s, k);
    l->n += k;
}

static void put_u64(struct line *l, uint64_t v) {
    char tmp[24];
    int i = 0;
    do {
        tmp[i++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (i > 0 && l->n + 2 < sizeof l->buf) l->buf[l->n++] = tmp[--i];
}

static void emit(struct line *l) {
    REAL(write, ssize_t, (int, const void *, size_t));
    l->buf[l->n++] = '\n';
    int saved = errno;
    ssize_t w = real_write(journal_fd, l->buf, l->n);
    (void)w;
    errno = saved;
}

/* The absolute path behind descriptor `fd` into `out`; 0 on success. */
static int fd_path(int fd, char *out) {
    char link[64] = "/proc/self/fd/";
    struct line l = {.n = 0};
    put_u64(&l, (uint64_t)fd);
    memcpy(link + 14, l.buf, l.n);
    link[14 + l.n] = 0;
    ssize_t n = readlink(link, out, PATH_MAX - 1);
    if (n <= 0) return -1;
    out[n] = 0;
    return 0;
}

/* `path` relative to `dirfd` as an absolute path (not canonicalised) into `out`. */
static int resolve(int dirfd, const char *path, char *out) {
    if (path[0] == '/') {
        if (strlen(path) >= PATH_MAX) return -1;
        strcpy(out, path);
        return 0;
    }
    if (dirfd == AT_FDCWD) {
        if (!getcwd(out, PATH_MAX)) return -1;
    } else if (fd_path(dirfd, out) != 0) {
        return -1;
    }
    size_t a = strlen(out), b = strlen(path);
    if (a + b + 2 >= PATH_MAX) return -1;
    out[a] = '/';
    memcpy(out + a + 1, path, b + 1);
    return 0;
}

/* Keeps the file named `abs` reachable from the graveyard (a hard link). */
static void bury(const char *abs) {
    char name[PATH_MAX];
    struct line l = {.n = 0};
    put_str(&l, grave);
    put_str(&l, "/g");
    put_u64(&l, (uint64_t)getpid());
    put_str(&l, "-");
    put_u64(&l, __atomic_fetch_add(&grave_seq, 1, __ATOMIC_RELAXED));
    memcpy(name, l.buf, l.n);
    name[l.n] = 0;
    raw_link(abs, name);
}

static void after_open(int fd, int flags) {
    if (fd < 0 || !active() || !(flags & (O_CREAT | O_TRUNC))) return;
    char path[PATH_MAX];
    struct stat st;
    if (fd_path(fd, path) != 0 || !under_prefix(path) || fstat(fd, &st) != 0) return;
    struct line l = {.n = 0};
    put_str(&l, "O ");
    put_u64(&l, st.st_ino);
    put_str(&l, " ");
    put_str(&l, path);
    emit(&l);
}

/* Opens run under the name lock when they may create a name, so that their line comes
 * before any directory sync that covers the new name. */
#define OPEN_BODY(call)                                              \
    mode_t mode = 0;                                                 \
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {    \
        va_list ap;                                                  \
        va_start(ap, flags);                                         \
        mode = va_arg(ap, mode_t);                                   \
        va_end(ap);                                                  \
    }                                                                \
    int locked = active() && (flags & (O_CREAT | O_TRUNC));          \
    if (locked) pthread_mutex_lock(&ns_lock);                        \
    int fd = call;                                                   \
    int saved = errno;                                               \
    after_open(fd, flags);                                           \
    if (locked) pthread_mutex_unlock(&ns_lock);                      \
    errno = saved;                                                   \
    return fd

int open(const char *p, int flags, ...) {
    REAL(open, int, (const char *, int, ...));
    OPEN_BODY(real_open(p, flags, mode));
}

int open64(const char *p, int flags, ...) {
    REAL(open64, int, (const char *, int, ...));
    OPEN_BODY(real_open64(p, flags, mode));
}

int openat(int dirfd, const char *p, int flags, ...) {
    REAL(openat, int, (int, const char *, int, ...));
    OPEN_BODY(real_openat(dirfd, p, flags, mode));
}

int openat64(int dirfd, const char *p, int flags, ...) {
    REAL(openat64, int, (int, const char *, int, ...));
    OPEN_BODY(real_openat64(dirfd, p, flags, mode));
}

int creat(const char *p, mode_t mode) {
    return open(p, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

int creat64(const char *p, mode_t mode) {
    return open64(p, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* fsync and fdatasync: `real` is the call itself. */
static int sync_call(int fd, int (*real)(int)) {
    char path[PATH_MAX];
    struct stat st;
    if (!active() || fstat(fd, &st) != 0 || fd_path(fd, path) != 0 || !under_prefix(path))
        return real(fd);
    struct line l = {.n = 0};
    if (S_ISDIR(st.st_mode)) {
        pthread_mutex_lock(&ns_lock);
        int r = real(fd);
        int saved = errno;
        if (r == 0) {
            put_str(&l, "D ");
            put_str(&l, path);
            emit(&l);
        }
        pthread_mutex_unlock(&ns_lock);
        errno = saved;
        return r;
    }
    uint64_t tk = __atomic_fetch_add(&ticket, 1, __ATOMIC_SEQ_CST);
    int r = real(fd);
    if (r == 0) {
        put_str(&l, "S ");
        put_u64(&l, st.st_ino);
        put_str(&l, " ");
        put_u64(&l, (uint64_t)st.st_size);
        put_str(&l, " ");
        put_u64(&l, tk);
        emit(&l);
    }
    return r;
}

/* Before a write of `n` bytes at `off` (-1: at the file position) to `fd`: journals the
 * bytes it will replace, if it overwrites any under the watched directory. */
static void before_write(int fd, off_t off, size_t n) {
    struct stat st;
    char path[PATH_MAX];
    if (!active() || fd == journal_fd || n == 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    if (fd_path(fd, path) != 0 || !under_prefix(path)) return;
    if (off < 0) {
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || (fl & O_APPEND)) return;
        off = lseek(fd, 0, SEEK_CUR);
        if (off < 0) return;
    }
    if (off >= st.st_size) return;
    uint64_t end = (uint64_t)off + n < (uint64_t)st.st_size ? (uint64_t)off + n : (uint64_t)st.st_size;
    uint64_t tk = __atomic_fetch_add(&ticket, 1, __ATOMIC_SEQ_CST);
    static const char hex[] = "0123456789abcdef";
    unsigned char old[4096];
    for (uint64_t at = (uint64_t)off; at < end;) {
        size_t k = end - at < sizeof old ? (size_t)(end - at) : sizeof old;
        ssize_t got = pread(fd, old, k, (off_t)at);
        if (got <= 0) return;
        k = (size_t)got;
        int zero = 1;
        for (size_t i = 0; i < k && zero; i++) zero = old[i] == 0;
        struct line l = {.n = 0};
        put_str(&l, zero ? "Z " : "X ");
        put_u64(&l, st.st_ino);
        put_str(&l, " ");
        put_u64(&l, at);
        put_str(&l, " ");
        put_u64(&l, k);
        put_str(&l, " ");
        put_u64(&l, tk);
        if (!zero) {
            l.buf[l.n++] = ' ';
            for (size_t i = 0; i < k; i++) {
                l.buf[l.n++] = hex[old[i] >> 4];
                l.buf[l.n++] = hex[old[i] & 15];
            }
        }
        emit(&l);
        at += k;
    }
}

ssize_t write(int fd, const void *buf, size_t n) {
    REAL(write, ssize_t, (int, const void *, size_t));
    int saved = errno;
    before_write(fd, -1, n);
    errno = saved;
    return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL(pwrite, ssize_t, (int, const void *, size_t, off_t));
    int saved = errno;
    before_write(fd, off, n);
    errno = saved;
    return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
    REAL(pwrite64, ssize_t, (int, const void *, size_t, off64_t));
    int saved = errno;
    before_write(fd, (off_t)off, n);
    errno = saved;
    return real_pwrite64(fd, buf, n, off);
}

int fsync(int fd) {
    REAL(fsync, int, (int));
    return sync_call(fd, real_fsync);
}

int fdatasync(int fd) {
    REAL(fdatasync, int, (int));
    return sync_call(fd, real_fdatasync);
}

int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags) {
    REAL(sync_file_range, int, (int, off64_t, off64_t, unsigned int));
    int r = real_sync_file_range(fd, off, n, flags);
    char path[PATH_MAX];
    struct stat st;
    if (r == 0 && active() && fd_path(fd, path) == 0 && under_prefix(path) &&
        fstat(fd, &st) == 0) {
        int saved = errno;
        struct line l = {.n = 0};
        put_str(&l, "W ");
        put_u64(&l, st.st_ino);
        put_str(&l, " ");
        put_u64(&l, (uint64_t)off);
        put_str(&l, " ");
        put_u64(&l, (uint64_t)n);
        put_str(&l, " ");
        put_u64(&l, flags);
        emit(&l);
        errno = saved;
    }
    return r;
}

int msync(void *addr, size_t len, int flags) {
    REAL(msync, int, (void *, size_t, int));
    int r = real_msync(addr, len, flags);
    if (r == 0 && active()) {
        struct line l = {.n = 0};
        put_str(&l, "M ");
        put_u64(&l, len);
        put_str(&l, " ");
        put_u64(&l, (uint64_t)flags);
        emit(&l);
    }
    return r;
}

/* Two-path name events (rename, link), run under the name lock. `kind` is "R" or "L". */
static int two_paths(const char *kind, int olddir, const char *old, int newdir,
                     const char *new, int (*op)(void *), void *arg) {
    char a[PATH_MAX], b[PATH_MAX];
    struct stat st;
    if (!active() || resolve(olddir, old, a) != 0 || resolve(newdir, new, b) != 0 ||
        (!under_prefix(a) && !under_prefix(b)))
        return op(arg);
    pthread_mutex_lock(&ns_lock);
    int have = lstat(a, &st) == 0;
    if (kind[0] == 'R') bury(b); /* the file a rename replaces */
    int r = op(arg);
    int saved = errno;
    if (r == 0 && have) {
        struct line l = {.n = 0};
        put_str(&l, kind);
        put_str(&l, " ");
        put_u64(&l, st.st_ino);
        put_str(&l, " ");
        put_str(&l, a);
        put_str(&l, "\t");
        put_str(&l, b);
        emit(&l);
    }
    pthread_mutex_unlock(&ns_lock);
    errno = saved;
    return r;
}

struct two {
    int od;
    const char *o;
    int nd;
    const char *n;
    unsigned fl;
};

static int do_renameat2(void *p) {
    struct two *t = p;
    REAL(renameat2, int, (int, const char *, int, const char *, unsigned));
    return real_renameat2(t->od, t->o, t->nd, t->n, t->fl);
}

static int do_rename(void *p) {
    struct two *t = p;
    REAL(rename, int, (const char *, const char *));
    return real_rename(t->o, t->n);
}

static int do_renameat(void *p) {
    struct two *t = p;
    REAL(renameat, int, (int, const char *, int, const char *));
    return real_renameat(t->od, t->o, t->nd, t->n);
}

static int do_link(void *p) {
    struct two *t = p;
    return raw_link(t->o, t->n);
}

static int do_linkat(void *p) {
    struct two *t = p;
    REAL(linkat, int, (int, const char *, int, const char *, int));
    return real_linkat(t->od, t->o, t->nd, t->n, (int)t->fl);
}

int rename(const char *o, const char *n) {
    struct two t = {AT_FDCWD, o, AT_FDCWD, n, 0};
    return two_paths("R", AT_FDCWD, o, AT_FDCWD, n, do_rename, &t);
}

int renameat(int od, const char *o, int nd, const char *n) {
    struct two t = {od, o, nd, n, 0};
    return two_paths("R", od, o, nd, n, do_renameat, &t);
}

int renameat2(int od, const char *o, int nd, const char *n, unsigned fl) {
    struct two t = {od, o, nd, n, fl};
    return two_paths("R", od, o, nd, n, do_renameat2, &t);
}

int link(const char *o, const char *n) {
    struct two t = {AT_FDCWD, o, AT_FDCWD, n, 0};
    return two_paths("L", AT_FDCWD, o, AT_FDCWD, n, do_link, &t);
}

int linkat(int od, const char *o, int nd, const char *n, int fl) {
    struct two t = {od, o, nd, n, (unsigned)fl};
    return two_paths("L", od, o, nd, n, do_linkat, &t);
}

static int unlink_common(int dirfd, const char *p, int flags) {
    REAL(unlinkat, int, (int, const char *, int));
    char a[PATH_MAX];
    struct stat st;
    if (!active() || (flags & AT_REMOVEDIR) || resolve(dirfd, p, a) != 0 || !under_prefix(a))
        return real_unlinkat(dirfd, p, flags);
    pthread_mutex_lock(&ns_lock);
    int have = lstat(a, &st) == 0 && S_ISREG(st.st_mode);
    if (have) bury(a);
    int r = real_unlinkat(dirfd, p, flags);
    int saved = errno;
    if (r == 0 && have) {
        struct line l = {.n = 0};
        put_str(&l, "U ");
        put_u64(&l, st.st_ino);
        put_str(&l, " ");
        put_str(&l, a);
        emit(&l);
    }
    pthread_mutex_unlock(&ns_lock);
    errno = saved;
    return r;
}

int unlink(const char *p) { return unlink_common(AT_FDCWD, p, 0); }

int unlinkat(int dirfd, const char *p, int flags) { return unlink_common(dirfd, p, flags); }

static void truncated(int fd, const char *p, off_t size) {
    char a[PATH_MAX];
    struct stat st;
    if (!active()) return;
    if (fd >= 0 ? fd_path(fd, a) != 0 : resolve(AT_FDCWD, p, a) != 0) return;
    if (!under_prefix(a) || lstat(a, &st) != 0) return;
    struct line l = {.n = 0};
    put_str(&l, "T ");
    put_u64(&l, st.st_ino);
    put_str(&l, " ");
    put_u64(&l, (uint64_t)size);
    emit(&l);
}

int ftruncate(int fd, off_t size) {
    REAL(ftruncate, int, (int, off_t));
    int r = real_ftruncate(fd, size);
    int saved = errno;
    if (r == 0) truncated(fd, NULL, size);
    errno = saved;
    return r;
}

int ftruncate64(int fd, off64_t size) {
    REAL(ftruncate64, int, (int, off64_t));
    int r = real_ftruncate64(fd, size);
    int saved = errno;
    if (r == 0) truncated(fd, NULL, (off_t)size);
    errno = saved;
    return r;
}

int truncate(const char *p, off_t size) {
    REAL(truncate, int, (const char *, off_t));
    int r = real_truncate(p, size);
    int saved = errno;
    if (r == 0) truncated(-1, p, size);
    errno = saved;
    return r;
}

int truncate64(const char *p, off64_t size) {
    REAL(truncate64, int, (const char *, off64_t));
    int r = real_truncate64(p, size);
    int saved = errno;
    if (r == 0) truncated(-1, p, (off_t)size);
    errno = saved;
    return r;
}
