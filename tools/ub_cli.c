#define _GNU_SOURCE /* sync_file_range */
#include "ub_cli.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ub_cpus.h"
#include "ub_progress.h"
#include "ub_usda.h"
#include "ub_usdb_write.h"
#include "ub_usdc_write.h"

void ub_cli_print_diags(ub_diags *d)
{
    /* Once memory has run out, what is reported after it mostly follows
     * from it (every clip after the first that could not be read, every
     * arc to a layer left out): the first such error says what to do. */
    size_t first_oom = ub_diags_first_oom(d), hidden = 0;
    ub_diags_sort(d);
    for (size_t i = 0; i < ub_diags_count(d); i++) {
        const ub_diag *g = ub_diags_at(d, i);
        if (g->seq > first_oom)
            hidden++;
        else
            ub_diag_print(stderr, g);
    }
    /* an error: memory ran out, and what is shown may point at the lost
     * one ("has errors (reported there)") */
    size_t lost = ub_diags_lost(d);
    if (lost)
        fprintf(stderr, "usdbake: error: out of memory: %zu more "
                        "diagnostic%s could not be kept\n",
                lost, lost == 1 ? "" : "s");
    if (hidden)
        fprintf(stderr, "usdbake: note: %zu more diagnostic%s after running "
                        "out of memory not shown\n",
                hidden, hidden == 1 ? "" : "s");
}

int ub_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "usdbake %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'usdbake %s --help'.\n", cmd);
    va_end(ap);
    return UB_EXIT_USAGE;
}

uint64_t ub_cli_file_size(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    return (uint64_t)st.st_size;
}

int ub_session_open(ub_session *s, const char *const *search, int n_search)
{
    s->strtab = ub_strtab_new();
    s->diags = ub_diags_new();
    s->loader = s->strtab && s->diags ? ub_loader_new(s->strtab, s->diags)
                                      : NULL;
    s->schemas = s->strtab ? ub_schema_reg_new(s->strtab) : NULL;
    bool ok = s->loader != NULL && s->schemas != NULL &&
              ub_schema_reg_load_plugins(s->schemas,
                                         getenv("PXR_PLUGINPATH_NAME"),
                                         s->diags) == 0;
    if (ok) {
        size_t nf;
        const ub_meta_field *f = ub_schema_fields(s->schemas, &nf);
        ub_loader_set_fields(s->loader, f, nf);
    }
    for (int i = 0; ok && i < n_search; i++)
        ok = ub_loader_add_search_path(s->loader, search[i]) == 0;
    if (ok)
        return 0;
    fprintf(stderr, "usdbake: error: out of memory\n");
    ub_session_close(s);
    return -1;
}

void ub_session_close(ub_session *s)
{
    ub_loader_free(s->loader);
    ub_schema_reg_free(s->schemas);
    ub_diags_free(s->diags);
    ub_strtab_free(s->strtab);
    *s = (ub_session){0};
}

/* --- interrupted runs ------------------------------------------------------
 * A run stopped by SIGINT, SIGTERM or SIGHUP must not leave its temporary
 * output behind.  A signal handler gets no context pointer, so the names of
 * the temporary files being written are the one piece of mutable global
 * state in usdbake: a few slots, each NULL or a name owned by an open
 * ub_out.  They are lock-free atomics (which a handler may read), set
 * before the file is created (mkstemp writes the final name into the
 * buffer before it creates the file, so the handler at worst unlinks a
 * name that does not exist yet) and cleared after it is renamed or removed
 * and before the name is freed. */
#define UB_OUT_SLOTS 8
static _Atomic(char *) ub_out_live[UB_OUT_SLOTS];

static void ub_out_live_set(char *tmp)
{
    for (int i = 0; i < UB_OUT_SLOTS; i++) {
        char *none = NULL;
        if (atomic_compare_exchange_strong(&ub_out_live[i], &none, tmp))
            return;
    }
    /* More outputs open at once than slots: that one is not removed on a
     * signal (usdbake opens at most two). */
}

static void ub_out_live_clear(const char *tmp)
{
    for (int i = 0; i < UB_OUT_SLOTS; i++) {
        char *cur = (char *)tmp;
        if (atomic_compare_exchange_strong(&ub_out_live[i], &cur, NULL))
            return;
    }
}

/* Async-signal-safe: unlink, signal and raise only. */
static void ub_out_on_signal(int sig)
{
    for (int i = 0; i < UB_OUT_SLOTS; i++) {
        char *tmp = atomic_load(&ub_out_live[i]);
        if (tmp)
            unlink(tmp);
    }
    /* die of the signal, so the caller sees it (a shell: 128 + sig) */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* SIGBUS: a page of a mapped file that cannot be read (the file was cut
 * short by someone else, or the disk failed) -- a crate output read
 * back in place, an input.  Said, as a read that failed would be, then
 * as any other signal: no output left, the process ends by it (an exit
 * status of its own would mean something else to each command: diff's
 * 1 is "they differ").  Async-signal-safe: write, then as above. */
static void ub_out_on_fault(int sig)
{
    static const char msg[] = "usdbake: error: a file being read was cut "
                              "short or could not be read (SIGBUS)\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    ub_out_on_signal(sig);
}

void ub_cli_guard_std_fds(void)
{
    /* The end that fails to be used is opened: writes to a standard output
     * opened read-only fail (EBADF) as writes to a closed one do, and
     * reads from a write-only standard input likewise. */
    static const int flags[3] = {O_WRONLY, O_RDONLY, O_RDONLY};
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        int got = open("/dev/null", flags[fd]);
        if (got >= 0 && got != fd) { /* a lower one was closed too */
            close(got);
            return;
        }
    }
}

void ub_cli_catch_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = ub_out_on_signal;
        sigemptyset(&sa.sa_mask);
        /* a signal ignored by whoever started us stays ignored (nohup) */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
    struct sigaction fault;
    memset(&fault, 0, sizeof fault);
    fault.sa_handler = ub_out_on_fault;
    sigemptyset(&fault.sa_mask);
    sigaction(SIGBUS, &fault, NULL);
}

bool ub_cli_is_stdout(const char *path)
{
    return !path || strcmp(path, "-") == 0 ||
           strcmp(path, "/dev/stdout") == 0 ||
           strcmp(path, "/dev/fd/1") == 0 ||
           strcmp(path, "/proc/self/fd/1") == 0;
}

/* path with its directory resolved (the file itself need not exist),
 * malloc'd; NULL when the directory cannot be resolved */
static char *ub_cli_resolved(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dn = slash ? (size_t)(slash - path) : 0;
    char *dir = malloc(dn + 2);
    if (!dir)
        return NULL;
    if (slash) {
        size_t k = dn ? dn : 1; /* "/x": the root */
        memcpy(dir, path, k);
        dir[k] = 0;
    } else {
        strcpy(dir, ".");
    }
    char *real = realpath(dir, NULL);
    free(dir);
    if (!real)
        return NULL;
    const char *base = slash ? slash + 1 : path;
    char *r = malloc(strlen(real) + strlen(base) + 2);
    if (r)
        sprintf(r, "%s/%s", real, base);
    free(real);
    return r;
}

bool ub_cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    bool ha = stat(a, &sa) == 0, hb = stat(b, &sb) == 0;
    if (ha && hb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ha || hb)
        return false; /* a file that is there is not one that is not */
    char *ra = ub_cli_resolved(a), *rb = ub_cli_resolved(b);
    bool same = ra && rb ? strcmp(ra, rb) == 0 : strcmp(a, b) == 0;
    free(ra);
    free(rb);
    return same;
}

int ub_out_open(ub_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    /* the names of standard output are standard output itself: opened
     * again, a file behind it would be truncated, not appended to */
    if (ub_cli_is_stdout(path)) {
        o->fd = STDOUT_FILENO;
        return 0;
    }
    o->path = strdup(path);
    if (!o->path) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return -1;
    }
    /* what is there (through a link: the file it names), if anything */
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "usdbake: error: cannot write '%s': it is a "
                        "directory\n", path);
        ub_out_abort(o);
        return -1;
    }
    struct stat lst;
    bool link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
    if ((exists && !S_ISREG(st.st_mode)) ||
        (link && (strncmp(path, "/dev/", 5) == 0 ||
                  strncmp(path, "/proc/", 6) == 0))) {
        /* A device, a pipe or a socket (/dev/null, /dev/stdout, a fifo):
         * written in place.  Renaming a file over it would replace the
         * device node itself.  So is a link in /dev or /proc, which may
         * stand for a descriptor (/dev/stdout when standard output is a
         * file): renaming over it would replace the link in /dev. */
        o->fd = open(path, O_WRONLY | O_TRUNC);
        if (o->fd < 0) {
            fprintf(stderr, "usdbake: error: cannot write '%s': %s\n", path,
                    strerror(errno));
            ub_out_abort(o);
            return -1;
        }
        return 0;
    }
    /* A symbolic link stays one: the file it names is replaced (a
     * dangling link is replaced itself, as before there was a file) */
    const char *dest = path;
    if (link && (o->dest = realpath(path, NULL)) != NULL)
        dest = o->dest;
    size_t n = strlen(dest);
    o->tmp = malloc(n + 16);
    if (!o->tmp) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        ub_out_abort(o);
        return -1;
    }
    memcpy(o->tmp, dest, n);
    memcpy(o->tmp + n, ".tmp.XXXXXX", 12);
    ub_out_live_set(o->tmp);
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0) {
        int e = errno;
        ub_out_live_clear(o->tmp);
        fprintf(stderr, "usdbake: error: cannot write '%s': %s (creating a "
                        "temporary file beside it)\n", path, strerror(e));
        free(o->tmp);
        o->tmp = NULL;
        ub_out_abort(o);
        return -1;
    }
    /* mkstemp makes the file 0600.  A file replaced keeps its permissions
     * (a group-writable publish area stays so) and, where the system lets
     * us, its owner and group; a new file gets the usual umask. */
    mode_t mode;
    if (exists) { /* a regular file, here or where the link points */
        mode = st.st_mode & 0777;
        /* the owner takes privilege; the group only membership */
        if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
            fchown(o->fd, st.st_uid, st.st_gid) != 0)
            (void)!fchown(o->fd, (uid_t)-1, st.st_gid); /* else ours */
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(o->fd, mode) != 0) {
        fprintf(stderr, "usdbake: error: cannot write '%s': %s\n", path,
                strerror(errno));
        ub_out_abort(o);
        return -1;
    }
    return 0;
}

static void ub_out_write_failed(const ub_out *o, int err)
{
    /* said as every other command says it, not as the file's fault */
    if (err == ENOMEM)
        fprintf(stderr, "usdbake: error: out of memory writing %s%s%s\n",
                o->path ? "'" : "", o->path ? o->path : "standard output",
                o->path ? "'" : "");
    else
        fprintf(stderr, "usdbake: error: cannot write %s%s%s: %s\n",
                o->path ? "'" : "",
                o->path ? o->path : "to standard output",
                o->path ? "'" : "", strerror(err));
}

static int ub_out_write_raw(ub_out *o, const void *data, size_t len);

int ub_out_open_held(ub_out *o, const char *path)
{
    if (ub_out_open(o, path) != 0)
        return -1;
    o->spill = -1;
    o->held = !o->tmp; /* whatever is written in place */
    return 0;
}

/* An unlinked temporary file for held output, or -1 after printing why:
 * one without a name where the file system has them, else a named one
 * unlinked at once. */
static int ub_out_spill_file(void)
{
    int fd0 = ub_tmpfile_open();
    if (fd0 >= 0)
        return fd0;
    const char *dir = ub_tmpdir();
    size_t n = strlen(dir);
    char *t = malloc(n + 32);
    if (!t) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return -1;
    }
    memcpy(t, dir, n);
    memcpy(t + n, "/usdbake-output.XXXXXX", 23);
    /* named to the signal handler until it is unlinked */
    ub_out_live_set(t);
    int fd = mkstemp(t);
    int err = errno;
    if (fd >= 0)
        unlink(t); /* gone with the descriptor, whatever ends the run */
    ub_out_live_clear(t);
    if (fd < 0)
        fprintf(stderr, "usdbake: error: cannot keep the output until it is "
                        "complete: cannot create a file in %s: %s (set "
                        "TMPDIR, or write to a file with -o)\n",
                dir, strerror(err));
    free(t);
    return fd;
}

static void ub_out_hold_failed(int err)
{
    fprintf(stderr, "usdbake: error: cannot keep the output until it is "
                    "complete: %s (set TMPDIR, or write to a file with "
                    "-o)\n", strerror(err));
}

/* Hold len bytes: in memory up to UB_OUT_HOLD_MEM, then (all of it) in
 * the spill file. */
static int ub_out_hold(ub_out *o, const void *data, size_t len)
{
    if (o->spill < 0 && len <= UB_OUT_HOLD_MEM - o->mem_len) {
        if (o->mem_len + len > o->mem_cap) {
            size_t cap = o->mem_cap ? o->mem_cap : 1 << 16;
            while (cap < o->mem_len + len)
                cap *= 2;
            char *m = realloc(o->mem, cap);
            if (!m) {
                ub_out_hold_failed(ENOMEM);
                return -1;
            }
            o->mem = m;
            o->mem_cap = cap;
        }
        memcpy(o->mem + o->mem_len, data, len);
        o->mem_len += len;
        o->held_len += len;
        return 0;
    }
    if (o->spill < 0) {
        o->spill = ub_out_spill_file();
        if (o->spill < 0)
            return -1;
        if (ub_write_all(o->spill, o->mem, o->mem_len) != 0) {
            ub_out_hold_failed(errno);
            return -1;
        }
        free(o->mem);
        o->mem = NULL;
        o->mem_len = o->mem_cap = 0;
    }
    if (ub_write_all(o->spill, data, len) != 0) {
        ub_out_hold_failed(errno);
        return -1;
    }
    o->held_len += len;
    return 0;
}

/* Hand what was held to its destination. */
static int ub_out_release(ub_out *o)
{
    if (o->spill < 0)
        return ub_out_write_raw(o, o->mem, o->mem_len);
    if (lseek(o->spill, 0, SEEK_SET) != 0) {
        ub_out_hold_failed(errno);
        return -1;
    }
    size_t cap = (size_t)1 << 20;
    char *b = malloc(cap);
    if (!b) {
        ub_out_hold_failed(ENOMEM);
        return -1;
    }
    int r = 0;
    for (;;) {
        ssize_t got = read(o->spill, b, cap);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            ub_out_hold_failed(errno);
            r = -1;
            break;
        }
        if (got == 0 || (r = ub_out_write_raw(o, b, (size_t)got)) != 0)
            break;
    }
    free(b);
    return r;
}

static void ub_out_unview(ub_out *o)
{
    if (o->view)
        munmap((void *)(uintptr_t)o->view, o->view_len);
    o->view = NULL;
    o->view_len = 0;
}

static void ub_out_unhold(ub_out *o)
{
    free(o->mem);
    o->mem = NULL;
    o->mem_len = o->mem_cap = 0;
    if (o->spill >= 0)
        close(o->spill);
    o->spill = -1;
    o->held = false;
}

int64_t ub_out_tell(const ub_out *o)
{
    if (o->held)
        return (int64_t)o->held_len;
    if (!o->tmp)
        return -1;
    off_t at = lseek(o->fd, 0, SEEK_CUR);
    return at < 0 ? -1 : (int64_t)at;
}

int ub_out_write(void *out, const void *data, size_t len)
{
    ub_out *o = out;
    if (o->held)
        return ub_out_hold(o, data, len);
    return ub_out_write_raw(o, data, len);
}

static int ub_out_write_raw(ub_out *o, const void *data, size_t len)
{
    if (ub_write_all(o->fd, data, len) == 0)
        return 0;
    ub_out_write_failed(o, errno);
    return -1;
}

/* Replacing a file by renaming another over it makes ext4 write the new
 * file's pages back inside rename(2) (auto_da_alloc), where the caller
 * waits for them: 20 ms of the 200-frame bench bake's 0.16 s.  The
 * writing thread starts the writeback of every few megabytes it wrote
 * instead, while the caller goes on, and the rename finds little left to
 * do.  (Linux only: elsewhere the rename does it all.) */
#define UB_OUT_WRITEBACK_STEP ((uint64_t)8 << 20)

static void ub_out_bg_start_writeback(ub_out_bg *bg, size_t wrote)
{
#ifdef SYNC_FILE_RANGE_WRITE
    bg->written += wrote;
    if (!bg->o->tmp || bg->written - bg->flushed < UB_OUT_WRITEBACK_STEP)
        return; /* not a file of our own, or not enough yet */
    /* a hint: when it fails, the rename does the writeback */
    (void)sync_file_range(bg->o->fd, (off_t)bg->flushed,
                          (off_t)(bg->written - bg->flushed),
                          SYNC_FILE_RANGE_WRITE);
    bg->flushed = bg->written;
#else
    (void)bg;
    (void)wrote;
#endif
}

static void *ub_out_bg_run(void *arg)
{
    ub_out_bg *bg = arg;
    pthread_mutex_lock(&bg->mu);
    for (;;) {
        while (!bg->busy && !bg->stop)
            pthread_cond_wait(&bg->cv, &bg->mu);
        if (!bg->busy)
            break;
        pthread_mutex_unlock(&bg->mu);
        size_t len = bg->len;
        int err = ub_write_all(bg->o->fd, bg->send, len) == 0
                      ? 0
                      : errno;
        pthread_mutex_lock(&bg->mu);
        if (err && !bg->err)
            bg->err = err;
        bg->busy = false;
        pthread_cond_broadcast(&bg->cv);
        if (!err) {
            pthread_mutex_unlock(&bg->mu);
            ub_out_bg_start_writeback(bg, len);
            pthread_mutex_lock(&bg->mu);
        }
    }
    pthread_mutex_unlock(&bg->mu);
    return NULL;
}

void ub_out_bg_start(ub_out_bg *bg, ub_out *o)
{
    *bg = (ub_out_bg){.o = o};
    if (ub_cpus() < 2 || pthread_mutex_init(&bg->mu, NULL) != 0)
        return;
    if (pthread_cond_init(&bg->cv, NULL) != 0) {
        pthread_mutex_destroy(&bg->mu);
        return;
    }
    bg->threaded = pthread_create(&bg->th, NULL, ub_out_bg_run, bg) == 0;
    if (!bg->threaded) {
        pthread_cond_destroy(&bg->cv);
        pthread_mutex_destroy(&bg->mu);
    }
}

/* Say once why the output failed. */
static void ub_out_bg_failed(ub_out_bg *bg, int err)
{
    if (!bg->reported)
        ub_out_write_failed(bg->o, err);
    bg->reported = true;
}

/* Wait until no hand-over is in flight; its error, or 0.  Called with the
 * lock held. */
static int ub_out_bg_idle(ub_out_bg *bg)
{
    while (bg->busy)
        pthread_cond_wait(&bg->cv, &bg->mu);
    return bg->err;
}

/* Hand data over to the thread: copied into bg's own buffer, or lent. */
static int ub_out_bg_hand(ub_out_bg *bg, const void *data, size_t len,
                          bool copy)
{
    if (!bg->threaded)
        return ub_out_write(bg->o, data, len);
    pthread_mutex_lock(&bg->mu);
    int err = ub_out_bg_idle(bg);
    if (!err && copy && len > bg->cap) {
        char *nd = realloc(bg->data, len);
        if (nd) {
            bg->data = nd;
            bg->cap = len;
        } else {
            err = ENOMEM;
        }
    }
    if (!err) {
        /* a copy frees the writer's buffer at once: the file's write
         * (page cache) costs several times more */
        if (copy)
            memcpy(bg->data, data, len);
        bg->send = copy ? bg->data : data;
        bg->len = len;
        bg->busy = true;
        pthread_cond_broadcast(&bg->cv);
    }
    pthread_mutex_unlock(&bg->mu);
    if (err)
        ub_out_bg_failed(bg, err);
    return err ? -1 : 0;
}

int ub_out_bg_write(void *bg, const void *data, size_t len)
{
    return ub_out_bg_hand(bg, data, len, true);
}

int ub_out_bg_lend(ub_out_bg *bg, const void *data, size_t len)
{
    return ub_out_bg_hand(bg, data, len, false);
}

int ub_out_bg_finish(ub_out_bg *bg)
{
    int err = 0;
    if (bg->threaded) {
        pthread_mutex_lock(&bg->mu);
        err = ub_out_bg_idle(bg);
        bg->stop = true;
        pthread_cond_broadcast(&bg->cv);
        pthread_mutex_unlock(&bg->mu);
        pthread_join(bg->th, NULL);
        pthread_cond_destroy(&bg->cv);
        pthread_mutex_destroy(&bg->mu);
        bg->threaded = false;
    }
    free(bg->data);
    bg->data = NULL;
    if (err)
        ub_out_bg_failed(bg, err);
    return err ? -1 : 0;
}

int ub_out_commit(ub_out *o)
{
    int status = 0;
    ub_out_unview(o);
    if (o->held) {
        status = ub_out_release(o);
        ub_out_unhold(o);
    }
    if (o->tmp) {
        if (close(o->fd) != 0 ||
            rename(o->tmp, o->dest ? o->dest : o->path) != 0) {
            fprintf(stderr, "usdbake: error: cannot write '%s': %s\n",
                    o->path, strerror(errno));
            unlink(o->tmp);
            status = -1;
        }
        ub_out_live_clear(o->tmp);
        o->fd = -1;
    } else if (o->path) {
        if (close(o->fd) != 0 && status == 0) {
            fprintf(stderr, "usdbake: error: cannot write '%s': %s\n",
                    o->path, strerror(errno));
            status = -1;
        }
        o->fd = -1;
    }
    free(o->tmp);
    free(o->path);
    free(o->dest);
    o->dest = NULL;
    o->tmp = o->path = NULL;
    return status;
}

int ub_out_rewind_to(ub_out *o, uint64_t at)
{
    ub_out_unview(o);
    if (o->held && at <= o->held_len) {
        if (o->spill < 0)
            o->mem_len = (size_t)at;
        else if (ftruncate(o->spill, (off_t)at) != 0 ||
                 lseek(o->spill, (off_t)at, SEEK_SET) != (off_t)at)
            goto fail;
        o->held_len = at;
        return 0;
    }
    if (o->tmp && ftruncate(o->fd, (off_t)at) == 0 &&
        lseek(o->fd, (off_t)at, SEEK_SET) == (off_t)at)
        return 0;
fail:
    fprintf(stderr, "usdbake: error: cannot rewrite %s%s%s: %s\n",
            o->path ? "'" : "", o->path ? o->path : "standard output",
            o->path ? "'" : "",
            o->tmp || o->held ? strerror(errno) : "not a file");
    return -1;
}

/* ub_usdc_file on an ub_out of its own temporary file. */
static int ub_out_crate_write(void *out, const void *data, size_t len)
{
    return ub_out_write_raw(out, data, len);
}

static int ub_out_crate_read(void *out, void *data, size_t len, uint64_t at)
{
    ub_out *o = out;
    if (ub_pread_all(o->fd, data, len, at) == 0)
        return 0;
    fprintf(stderr, "usdbake: error: cannot read back '%s' while writing "
                    "it: %s\n", o->path, strerror(errno));
    return -1;
}

/* A value read back in place, from a mapping of the file: pread cost a
 * system call and a copy a value, ~5% of a convert of the prim-heavy
 * bench layer in an 8 MiB window.  The writer asks only for bytes it has
 * handed over, all inside the file; if the mapping fails, it reads. */
static const void *ub_out_crate_view(void *out, uint64_t at, size_t len)
{
    ub_out *o = out;
    if (at > SIZE_MAX - len)
        return NULL;
    if (at + len > o->view_len) {
        if (o->view_refused)
            return NULL;
        /* mapped past the end in steps, so that a growing file is
         * mapped again only a few times; the pages past its end are
         * never touched */
        size_t want = o->view_len ? o->view_len : (size_t)64 << 20;
        while (want < at + len && want <= SIZE_MAX / 2)
            want *= 2;
        if (want < at + len)
            return NULL;
        ub_out_unview(o);
        void *p = mmap(NULL, want, PROT_READ, MAP_SHARED, o->fd, 0);
        if (p == MAP_FAILED) {
            o->view_refused = true;
            return NULL;
        }
        o->view = p;
        o->view_len = want;
    }
    return o->view + at;
}

static int ub_out_crate_patch(void *out, const void *data, size_t len,
                              uint64_t at)
{
    ub_out *o = out;
    if (ub_pwrite_all(o->fd, data, len, at) == 0)
        return 0;
    ub_out_write_failed(o, errno);
    return -1;
}

bool ub_out_usdc_file(ub_out *o, size_t window, ub_usdc_file *f)
{
    if (!o->tmp || o->held)
        return false;
    *f = (ub_usdc_file){ub_out_crate_write, ub_out_crate_read,
                        ub_out_crate_patch, o, window, ub_out_crate_view};
    return true;
}

int ub_cli_env_number(const char *cmd, const char *var, unsigned long long max,
                      const char *must, unsigned long long *value)
{
    const char *env = getenv(var);
    if (!env || !*env)
        return UB_EXIT_OK;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(env, &end, 10);
    /* digits only: strtoull would also take a sign and leading blanks */
    if (!isdigit((unsigned char)env[0]) || *end || errno || n < 1 || n > max)
        return ub_cli_usage_error(cmd, "%s must be %s, not '%s'", var, must,
                                  env);
    *value = n;
    return UB_EXIT_OK;
}

int ub_cli_usdc_window(const char *cmd, size_t *window)
{
    unsigned long long n = UB_USDC_FILE_WINDOW;
    int bad = ub_cli_env_number(cmd, "USDBAKE_USDC_WINDOW", SIZE_MAX,
                                "a number of bytes from 1 up", &n);
    *window = (size_t)n;
    return bad;
}

void ub_out_abort(ub_out *o)
{
    ub_out_unview(o);
    if (o->held)
        ub_out_unhold(o);
    if (o->tmp) {
        close(o->fd);
        unlink(o->tmp);
        ub_out_live_clear(o->tmp);
    } else if (o->path && o->fd >= 0) {
        close(o->fd);
    }
    free(o->tmp);
    free(o->path);
    free(o->dest);
    o->dest = NULL;
    o->tmp = o->path = NULL;
    o->fd = -1;
}

int ub_cli_write_output(const char *path, const void *data, size_t len)
{
    ub_out o;
    if (ub_out_open(&o, path) != 0)
        return -1;
    if (ub_out_write(&o, data, len) != 0) {
        ub_out_abort(&o);
        return -1;
    }
    return ub_out_commit(&o);
}

int ub_cli_opt_value(int argc, char **argv, int *i, const char *name,
                     const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '=' && name[1] == '-') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

ub_out_format ub_cli_format_named(const char *name)
{
    if (strcmp(name, "usda") == 0)
        return UB_FMT_USDA;
    if (strcmp(name, "usdc") == 0)
        return UB_FMT_USDC;
    if (strcmp(name, "usdb") == 0)
        return UB_FMT_USDB;
    return UB_FMT_NONE;
}

int ub_cli_opt_output(int argc, char **argv, int *i, const char *cmd,
                      const char **path)
{
    int r = ub_cli_opt_value(argc, argv, i, "-o", path);
    if (r == 0)
        r = ub_cli_opt_value(argc, argv, i, "--output", path);
    if (r < 0)
        ub_cli_usage_error(cmd, "%s needs a file name", argv[*i]);
    return r;
}

int ub_cli_opt_format(int argc, char **argv, int *i, const char *cmd,
                      ub_out_format *fmt)
{
    const char *v;
    int r = ub_cli_opt_value(argc, argv, i, "-f", &v);
    if (r == 0)
        r = ub_cli_opt_value(argc, argv, i, "--format", &v);
    if (r == 0)
        return 0;
    if (r < 0 || (*fmt = ub_cli_format_named(v)) == UB_FMT_NONE) {
        ub_cli_usage_error(cmd, "--format takes usda, usdc or usdb");
        return -1;
    }
    return 1;
}

int ub_cli_no_usdz_output(const char *cmd, const char *out)
{
    size_t n = out ? strlen(out) : 0;
    if (n < 5 || strcasecmp(out + n - 5, ".usdz") != 0)
        return UB_EXIT_OK;
    return ub_cli_usage_error(cmd, "usdbake reads .usdz packages but writes "
                                   "none ('%s'): name the output .usda, "
                                   ".usdc or .usdb",
                              out);
}

ub_out_format ub_cli_format_of_path(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot || strchr(dot, '/'))
        return UB_FMT_NONE;
    if (strcmp(dot, ".usd") == 0)
        return UB_FMT_USDC;
    return ub_cli_format_named(dot + 1);
}

int ub_cli_write_layer(const ub_layer *layer, ub_out_format fmt, int level,
                       const ub_usdc_to *to, ub_buf *out, ub_diags *diags)
{
    int r;
    switch (fmt) {
    case UB_FMT_USDC:
        return ub_usdc_write_to(layer, out, to, diags);
    case UB_FMT_USDB:
        return ub_usdb_write_with(layer, level, to ? to->samples : NULL,
                                  to ? to->samples_ctx : NULL, out, diags);
    default:
        r = ub_usda_write(layer, out);
        if (r != 0 || out->failed) {
            fprintf(stderr, "usdbake: error: out of memory\n");
            return -1;
        }
        return 0;
    }
}

bool ub_cli_binary_to_tty(ub_out_format fmt, const char *out)
{
    return fmt != UB_FMT_USDA && ub_cli_is_stdout(out) &&
           isatty(STDOUT_FILENO);
}

void ub_cli_whole_read(ub_session *ss, const char *input,
                       const ub_layer *streamed, ub_cli_whole *w)
{
    memset(w, 0, sizeof *w);
    w->quiet = ub_diags_new();
    if (!w->quiet)
        return;
    /* the plugins' metadata fields, as the first reading had them */
    size_t nf;
    const ub_meta_field *f = ub_loader_fields(ss->loader, &nf);
    if (streamed->source) {
        ub_parse_opts po = {.fields = f, .n_fields = nf};
        w->parsed = ub_parse_usda_opts(ss->strtab, streamed->path,
                                       streamed->source,
                                       streamed->source_len, &po, w->quiet);
        w->layer = w->parsed;
    } else {
        /* a crate layer keeps no source: read the file again whole */
        w->loader = ub_loader_new(ss->strtab, w->quiet);
        if (w->loader) {
            ub_loader_set_fields(w->loader, f, nf);
            w->layer = ub_loader_open(w->loader, input, NULL,
                                      (ub_loc){NULL, 0, 0});
        }
    }
}

void ub_cli_whole_free(ub_cli_whole *w)
{
    ub_layer_free(w->parsed);
    ub_loader_free(w->loader);
    ub_diags_free(w->quiet);
    memset(w, 0, sizeof *w);
}

ub_layer *ub_cli_open_streamed(ub_session *ss, const char *input,
                               const ub_parse_stream *ps)
{
    ub_loader_set_stream(ss->loader, ps);
    ub_layer *layer =
        ub_loader_open(ss->loader, input, NULL, (ub_loc){NULL, 0, 0});
    ub_loader_set_stream(ss->loader, NULL);
    return layer;
}

/* Read input as a stream into a .usdb in bytes (ub_cli_convert).
 * Returns 0, or -1 after the error went to diags or was printed. */
static int ub_cli_convert_usdb(ub_session *ss, const char *input, int level,
                               ub_buf *bytes)
{
    ub_usdb_stream *st = ub_usdb_stream_new(level, ss->diags);
    if (!st) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return -1;
    }
    ub_parse_stream ps = {.prim_done = ub_usdb_stream_prim,
                          .prim_reopened = ub_usdb_stream_reopened,
                          .ctx = st,
                          .two_threads = true,
                          .head_percent = UB_USDB_STREAM_HEAD_PERCENT};
    ub_layer *layer = ub_cli_open_streamed(ss, input, &ps);
    int rc = -1;
    if (layer && !layer->streamed)
        rc = ub_usdb_write(layer, level, bytes, ss->diags); /* a .usdb */
    else if (layer)
        rc = ub_usdb_stream_end(st, layer, bytes);
    ub_usdb_stream_free(st);
    if (rc == 1) {
        bytes->len = 0;
        ub_cli_whole w;
        ub_cli_whole_read(ss, input, layer, &w);
        if (w.layer) {
            ub_layer_unindexed(w.layer);
            rc = ub_usdb_write(w.layer, level, bytes, ss->diags);
        } else {
            fprintf(stderr, "usdbake: error: out of memory\n");
            rc = -1;
        }
        ub_cli_whole_free(&w);
    }
    return rc;
}

/* The same into a .usdc.  A crate prim is written once it has closed, so
 * text that comes back to a prim after its children went out costs
 * nothing here; only a layer the parse returns whole (not text, or text
 * read again after a warning) is written whole.  What the stream finds
 * wrong is said only when its layer is the one written: after a syntax
 * error there is nothing to write, and a layer read again whole is
 * written (and judged) again. */
static int ub_cli_convert_usdc(ub_session *ss, const char *input,
                               ub_buf *bytes, ub_out *o, size_t window)
{
    /* the file, where it can take the crate as it is written */
    ub_usdc_file file;
    const ub_usdc_file *fp =
        ub_out_usdc_file(o, window, &file) ? &file : NULL;
    ub_usdc_to to = {.file = fp};
    ub_diags *said = ub_diags_new();
    ub_usdc_stream *st = said ? ub_usdc_stream_new_to(bytes, &to, said)
                              : NULL;
    if (!st) {
        ub_diags_free(said);
        fprintf(stderr, "usdbake: error: out of memory\n");
        return -1;
    }
    ub_parse_stream ps = {.prim_done = ub_usdc_stream_prim,
                          .ctx = st,
                          .two_threads = true,
                          .head_percent = UB_USDC_STREAM_HEAD_PERCENT,
                          .parse_threads = ub_usdc_stream_parse_threads,
                          .tail_pace = ub_usdc_stream_tail_pace,
                          .pages = ub_usdc_stream_pages(st)};
    ub_layer *layer = ub_cli_open_streamed(ss, input, &ps);
    int rc = -1;
    if (layer && layer->streamed) {
        rc = ub_usdc_stream_end(st, layer);
        ub_diags_take(ss->diags, said);
    }
    ub_usdc_stream_free(st); /* (the stream's own thread is joined) */
    ub_diags_free(said);
    if (layer && !layer->streamed) {
        /* what the stream got before the parse gave up */
        bytes->len = 0;
        if (fp && ub_out_rewind_to(o, 0) != 0)
            return -1;
        ub_layer_unindexed(layer);
        rc = ub_usdc_write_to(layer, bytes, &to, ss->diags);
    }
    return rc;
}

int ub_cli_convert(const char *cmd, const char *input, const char *out,
                   ub_out_format format, int level)
{
    size_t window = 0;
    int bad = format == UB_FMT_USDC ? ub_cli_usdc_window(cmd, &window)
                                    : UB_EXIT_OK;
    if (bad != UB_EXIT_OK)
        return bad;
    ub_session ss;
    ub_buf bytes;
    ub_buf_init(&bytes);
    int status = UB_EXIT_OK;
    /* A crate goes to its file as it is written (ub_out_usdc_file): the
     * file is opened first. */
    ub_out file;
    bool writing = false;
    if (ub_session_open(&ss, NULL, 0) != 0) {
        status = UB_EXIT_INPUT;
    } else if (format == UB_FMT_USDC && ub_out_open(&file, out) != 0) {
        status = UB_EXIT_INPUT;
    } else if (format == UB_FMT_USDB || format == UB_FMT_USDC) {
        writing = format == UB_FMT_USDC;
        ub_progress prog;
        ub_progress_start(&prog, "converting", ub_cli_file_size(input));
        ub_loader_set_progress(ss.loader, ub_progress_loader_hook, &prog);
        if ((format == UB_FMT_USDB
                 ? ub_cli_convert_usdb(&ss, input, level, &bytes)
                 : ub_cli_convert_usdc(&ss, input, &bytes, &file,
                                       window)) != 0)
            status = UB_EXIT_INPUT;
        ub_progress_end(&prog);
    } else {
        ub_progress prog;
        ub_progress_start(&prog, "reading", ub_cli_file_size(input));
        ub_loader_set_progress(ss.loader, ub_progress_loader_hook, &prog);
        ub_layer *layer =
            ub_loader_open(ss.loader, input, NULL, (ub_loc){NULL, 0, 0});
        ub_progress_end(&prog);
        int rc = -1;
        if (layer) {
            /* written, never searched: the name index (megabytes for a
             * prim of 100,000 children) need not be there at the
             * writer's peak */
            ub_layer_unindexed(layer);
            rc = ub_cli_write_layer(layer, format, level, NULL, &bytes,
                                    ss.diags);
        }
        if (!layer || rc != 0)
            status = UB_EXIT_INPUT;
    }
    if (ss.diags)
        ub_cli_print_diags(ss.diags);
    if (status == UB_EXIT_OK && bytes.failed) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        status = UB_EXIT_INPUT;
    }
    /* The file is written while the session gives the model back: on a
     * big layer each takes milliseconds (page cache; unmapping), and
     * neither needs the other. */
    if (writing && status != UB_EXIT_OK) {
        ub_out_abort(&file);
        writing = false;
    } else if (!writing && status == UB_EXIT_OK) {
        writing = ub_out_open(&file, out) == 0;
        if (!writing)
            status = UB_EXIT_INPUT;
    }
    ub_out_bg bg;
    int lent = -1;
    if (writing) {
        ub_out_bg_start(&bg, &file);
        lent = ub_out_bg_lend(&bg, bytes.data, bytes.len);
    }
    ub_session_close(&ss);
    if (writing) {
        int rc = ub_out_bg_finish(&bg) != 0 ? -1 : lent;
        if (rc == 0)
            rc = ub_out_commit(&file);
        else
            ub_out_abort(&file);
        if (rc != 0)
            status = UB_EXIT_INPUT;
    }
    ub_buf_free(&bytes);
    return status;
}
