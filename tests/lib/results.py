"""results: what every suite prints, in one place.

One line a check, "pass|FAIL|SKIP NAME: detail", as it happens; at the end
"SUITE[-LABEL]: N passed, N failed[, N skipped]", which tests/summary adds
up; the exit status is 1 when anything failed. A check's status is True
(pass), False (FAIL), None (SKIP, the detail says why) or one of those
three words.
"""

_WORDS = {True: "pass", False: "FAIL", None: "SKIP"}


class Results:
    def __init__(self):
        self.rows = []  # (name, status, detail)

    def report(self, name, status, detail=""):
        st = _WORDS[status] if status in (True, False, None) else status
        if st not in ("pass", "FAIL", "SKIP"):
            raise ValueError(f"status {status!r} of {name!r}")
        self.rows.append((name, st, detail))
        print(f"{st:4} {name}: {detail}", flush=True)
        return st == "pass"

    def count(self, status):
        return sum(r[1] == status for r in self.rows)

    def failed(self):
        return self.count("FAIL")

    def summary(self, suite, label=""):
        """Prints the closing line; returns the exit status."""
        skipped = self.count("SKIP")
        print(f"\n{suite}{('-' + label) if label else ''}: {self.count('pass')} passed, {self.failed()} failed" +
              (f", {skipped} skipped" if skipped else ""), flush=True)
        return 1 if self.failed() else 0


# the suite's own, for scripts with one run each
RESULTS = Results()
report = RESULTS.report
