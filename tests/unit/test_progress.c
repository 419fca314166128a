/* Unit tests of ub_progress: a bar on a terminal for long work only,
 * nothing when stderr is not a terminal, and few redraws. */
#include <CUnit/Basic.h>
#include <fcntl.h>
#include <pty.h>
#include <string.h>
#include <unistd.h>

#include "ub_progress.h"
#include "ub_test.h"

/* Run fn with stderr on a new terminal (or a pipe when tty is false) and
 * return what it wrote there. */
static size_t capture(bool tty, void (*fn)(void), char *out, size_t cap)
{
    int rd, wr;
    if (tty) {
        if (openpty(&rd, &wr, NULL, NULL, NULL) != 0)
            return (size_t)-1;
    } else {
        int fds[2];
        if (pipe(fds) != 0)
            return (size_t)-1;
        rd = fds[0];
        wr = fds[1];
    }
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(wr, STDERR_FILENO);
    fn();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(wr);
    fcntl(rd, F_SETFL, O_NONBLOCK);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(rd, out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(rd);
    return n;
}

static size_t count(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

static void big_work(void)
{
    ub_progress p;
    ub_progress_start(&p, "parsing", 200u * 1000 * 1000);
    /* Many quick updates: the bar is redrawn at most ~10 times a second. */
    for (uint64_t done = 0; done <= 100u * 1000 * 1000; done += 100000)
        ub_progress_update(&p, done);
    ub_progress_end(&p);
}

static void small_work(void)
{
    ub_progress p;
    ub_progress_start(&p, "parsing", 1000);
    for (uint64_t done = 0; done <= 1000; done++)
        ub_progress_update(&p, done);
    ub_progress_end(&p);
}

static void test_big_work_on_a_terminal(void)
{
    char buf[8192];
    size_t n = capture(true, big_work, buf, sizeof buf);
    CU_ASSERT_FATAL(n != (size_t)-1);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "parsing ["));
    /* The first draw, plus a redraw or two at most, then the erase. */
    CU_ASSERT(count(buf, '\r') >= 2);
    CU_ASSERT(count(buf, '\r') <= 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\r\033[K"));
}

static void test_nothing_when_not_a_terminal(void)
{
    char buf[8192];
    size_t n = capture(false, big_work, buf, sizeof buf);
    CU_ASSERT_EQUAL(n, 0);
}

static void test_nothing_for_short_work(void)
{
    char buf[8192];
    size_t n = capture(true, small_work, buf, sizeof buf);
    CU_ASSERT_EQUAL(n, 0);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    CU_pSuite s = CU_add_suite("progress", NULL, NULL);
    CU_add_test(s, "big work on a terminal", test_big_work_on_a_terminal);
    CU_add_test(s, "nothing when not a terminal",
                test_nothing_when_not_a_terminal);
    CU_add_test(s, "nothing for short work", test_nothing_for_short_work);
    unsigned failed = ub_test_run_all();
    return failed ? 1 : 0;
}
