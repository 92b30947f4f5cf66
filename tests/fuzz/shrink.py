"""Shrinks a failing sequence: delta debugging over its statements (the CREATE stays), then
simpler forms of each statement (fewer rows, clauses, assignments, no WHERE), as long as the
failure keeps its signature (the same failing read, or the same error wording)."""


def shrink(units, fails, budget=150):
    """units[0] is the CREATE. fails(units) -> bool. Returns the smallest failing list found."""
    head, body = units[:1], list(units[1:])
    tries = [0]

    def test(cand):
        if tries[0] >= budget:
            return False
        tries[0] += 1
        return fails(head + cand)

    n = 2
    while len(body) >= 2 and tries[0] < budget:
        chunk = max(1, len(body) // n)
        removed = False
        for i in range(0, len(body), chunk):
            cand = body[:i] + body[i + chunk:]
            if cand and test(cand):
                body, n, removed = cand, max(n - 1, 2), True
                break
        if not removed:
            if chunk == 1:
                break
            n = min(len(body), n * 2)
    if len(body) == 1 and tries[0] < budget and fails(head):
        body = []
    # simplify statements one at a time
    changed = True
    while changed and tries[0] < budget:
        changed = False
        for i, u in enumerate(body):
            for v in u.shrinks():
                v.iseed = u.iseed
                cand = body[:i] + [v] + body[i + 1:]
                if test(cand):
                    body, changed = cand, True
                    break
            if changed:
                break
    return head + body, tries[0]
