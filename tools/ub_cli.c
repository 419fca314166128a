#include "ub_cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ub_cli_print_diags(ub_diags *d)
{
    ub_diags_sort(d);
    for (size_t i = 0; i < ub_diags_count(d); i++)
        ub_diag_print(stderr, ub_diags_at(d, i));
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

static int ub_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int ub_cli_write_output(const char *path, const void *data, size_t len)
{
    if (!path || strcmp(path, "-") == 0) {
        if (ub_write_all(STDOUT_FILENO, data, len) != 0) {
            fprintf(stderr, "usdbake: error: cannot write to standard "
                            "output: %s\n", strerror(errno));
            return -1;
        }
        return 0;
    }
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return -1;
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "usdbake: error: cannot create '%s': %s\n", tmp,
                strerror(errno));
        free(tmp);
        return -1;
    }
    /* mkstemp makes the file 0600; outputs should get the usual umask. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || ub_write_all(fd, data, len) != 0 ||
        close(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        fprintf(stderr, "usdbake: error: cannot write '%s': %s\n", path,
                strerror(e));
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        fprintf(stderr, "usdbake: error: cannot write '%s': %s\n", path,
                strerror(e));
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
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
