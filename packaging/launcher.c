/* The `masklens` launcher: blocks SIGINT, then runs the real program in its place.
 *
 * A Ctrl+C while the Python interpreter starts (its own set-up, `site`, .pth files: 10-20 ms
 * before masklens' first line runs) would get Python's behaviour: a KeyboardInterrupt
 * traceback, or the process killed by the signal. A blocked signal stays pending, and the
 * signal mask survives exec: masklens' first lines (masklens.core.cli) install its handler and
 * unblock SIGINT, and a Ctrl+C from any earlier moment is then "masklens: interrupted", 130.
 *
 * TARGET (a compile-time string) is the program to run: a path relative to the folder of this
 * executable (symbolic links resolved), or absolute. It gets this launcher's arguments as they
 * are, argv[0] included. Built by packaging/launcher.py (`make setup`, `make bundle`).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef TARGET
#error "build with -DTARGET='\"path/of/the/program\"' (see packaging/launcher.py)"
#endif

int main(int argc, char **argv)
{
    sigset_t sigint;
    struct sigaction current;
    char path[PATH_MAX];

    (void)argc;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    /* only over the default action: an ignored SIGINT (`nohup`, a background job) stays as it
       is, and masklens unblocks only where it installs its own handler over the default */
    if (sigaction(SIGINT, NULL, &current) == 0 && current.sa_handler == SIG_DFL)
        sigprocmask(SIG_BLOCK, &sigint, NULL);

    if (TARGET[0] == '/') {
        if (snprintf(path, sizeof path, "%s", TARGET) >= (int)sizeof path)
            goto too_long;
    } else {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        char *slash;
        if (n < 0) {
            fprintf(stderr, "masklens: cannot find this launcher's folder: /proc/self/exe: %s\n",
                    strerror(errno));
            return 127;
        }
        path[n] = '\0';
        slash = strrchr(path, '/');
        if (slash == NULL || (size_t)(slash + 1 - path) + sizeof TARGET > sizeof path)
            goto too_long;
        memcpy(slash + 1, TARGET, sizeof TARGET);
    }
    execv(path, argv);
    fprintf(stderr, "masklens: cannot start %s: %s\n", path, strerror(errno));
    return 127;

too_long:
    fprintf(stderr, "masklens: the path of the program is too long\n");
    return 127;
}
