"""A terminal as a person has it: a tmux server of the test's own, its one
pane driven with send-keys and read with capture-pane. `prefix` runs tmux as
another user (runuser -u NAME -- env ...).

    t = Tmux("name", env=dict(os.environ, TERM="xterm-256color"))
    t.start("ward-pi; echo $? > /tmp/st; exec sh", 120, 30)
    t.wait_for(lambda s: "fake-model" in s)
"""
import subprocess
import time


class Tmux:
    def __init__(self, name, env=None, prefix=()):
        self.name = name
        self.env = env
        self.prefix = list(prefix)
        self.cmd = self.prefix + ["tmux", "-L", name]

    def another(self, suffix):
        """a second terminal like this one (its own tmux server)"""
        return Tmux(self.name + suffix, self.env, self.prefix)

    def _run(self, *args, **kw):
        return subprocess.run(self.cmd + list(args), env=self.env, capture_output=True, text=True, **kw)

    def start(self, shell_command, width=120, height=30):
        r = self._run("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), shell_command)
        if r.returncode != 0:
            raise RuntimeError(f"tmux new-session: {r.stderr.strip()}")

    def keys(self, *keys):
        """key names (Enter, C-d) and words, as send-keys takes them"""
        self._run("send-keys", "-t", self.name, *keys)

    def type(self, text):
        """text typed literally, each character a key (no key names)"""
        self._run("send-keys", "-t", self.name, "-l", text)

    def resize(self, width, height):
        self._run("resize-window", "-t", self.name, "-x", str(width), "-y", str(height))

    def screen(self):
        return self._run("capture-pane", "-t", self.name, "-p").stdout

    def wait_for(self, pred, seconds=30):
        """the screen once pred(screen) holds, or the last one seen"""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            s = self.screen()
            if pred(s):
                return s
            time.sleep(0.3)
        return self.screen()

    def kill(self):
        self._run("kill-server")


def widest(screen):
    return max((len(line.rstrip()) for line in screen.splitlines()), default=0)


def end_pi(t, done, seconds=20, alive=None):
    """Ctrl-D on Pi's empty editor ends it; once more only if it did not (a
    second one would reach the shell after it and end that). alive(): whether
    Pi still runs (ward-pi's session container), when its end is not the
    end of the pane's command (ward-pi checks what the agent left after).
    Returns the status the pane's shell wrote to `done`, or None."""
    import os
    end = time.monotonic() + seconds + (60 if alive else 0)
    t.keys("C-d")
    again = False
    while not os.path.exists(done) and time.monotonic() < end:
        time.sleep(0.2)
        if not again and time.monotonic() > end - seconds * 0.75 - (60 if alive else 0):
            if alive is None or alive():
                t.keys("C-d")
            again = True
    time.sleep(0.2)
    return open(done).read().strip() if os.path.exists(done) else None
