#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Judge one transport's run of the kernel's driver tests.

kernel_tests_report.py EXPECT TRANSPORT RESULTS TEST...

RESULTS holds NAME.log and NAME.rc for each TEST (NAME: the test's path
with / turned to _), written by kernel_tests_guest.sh.  Each test's own
KTAP case lines are read; a failing case that EXPECT lists for this
transport counts as an expected failure (XFAIL, with the reason), any
other failing case as a failure.  A test that prints no KTAP plan is
judged on its exit status: 4 is a skip; a KsftSkipEx raised before the
test's runner started (netpoll_basic.py, shaper.py and psp.py do that
when the kernel lacks what they need) is a skip too, with its message.

Prints, for the caller's KTAP stream, one block per test: its cases as
comment lines and a last line "VERDICT TEST # NOTE" where VERDICT is ok,
fail or skip.  Exit status: 0.

EXPECT lines: TRANSPORTS CASE VERDICT REASON...  TRANSPORTS is a
comma-separated list of globs over the transport names, CASE one over
case names ("ping.test_xdp_native_*", several comma-separated) or
TEST:main for a test as a whole; VERDICT is xfail (the case fails for the reason given).
"""

import fnmatch
import re
import sys

CASE = re.compile(r'^(not ok|ok) \d+ (\S+)(?:\s+#\s*(\S+)\s*(.*))?$')
PLAN = re.compile(r'^1\.\.(\d+)$')
SKIP_EX = re.compile(r'KsftSkipEx: (.*)$')


def read_expect(path, transport):
    """The (case glob, reason) pairs that apply to TRANSPORT."""
    rules = []
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            parts = line.split(None, 3)
            if len(parts) < 4 or parts[2] != 'xfail':
                sys.exit(f'{path}:{n}: want "TRANSPORTS CASE xfail REASON"')
            globs = parts[0].split(',')
            if any(fnmatch.fnmatchcase(transport, g) for g in globs):
                rules.append((parts[1], parts[3]))
    return rules


def expected(rules, case):
    """The reason CASE is expected to fail, or None."""
    for globs, reason in rules:
        if any(fnmatch.fnmatchcase(case, g) for g in globs.split(',')):
            return reason
    return None


def judge(rules, test, log, rc):
    """Print TEST's cases and its verdict line."""
    name = test.rsplit('/', 1)[-1].rsplit('.', 1)[0]
    cases = fails = xfails = xpass = 0
    planned = None
    skip_msg = None
    diag = []
    for line in log.splitlines():
        m = PLAN.match(line)
        if m:
            planned = int(m.group(1))
        m = SKIP_EX.search(line)
        if m:
            skip_msg = m.group(1)
        m = CASE.match(line)
        if not m:
            if 'SKIP' in line and not skip_msg:
                # the shell tests' "TEST: SKIP: reason   [ OK ]"
                skip_msg = re.sub(r'^(TEST:\s*)?(SKIP:?\s*)*|\s*\[.*\]$', '',
                                  line.strip())[:200]
            if line.startswith('#') and ('Error' in line or 'STDERR' in line or
                                         'CMD' in line or 'Check' in line or
                                         'Exception: ' in line):
                diag.append(line)
            continue
        cases += 1
        status, case, directive = m.group(1), m.group(2), m.group(3)
        if status == 'ok':
            if not directive and expected(rules, case):
                xpass += 1
                line += ' # XPASS: listed in the expected failures'
            print(f'#   {line}')
            continue
        reason = expected(rules, case)
        if reason:
            xfails += 1
            print(f'#   ok {case} # XFAIL {reason}')
        else:
            fails += 1
            for d in diag[-8:]:
                print(f'#     {d}')
            print(f'#   {line}')
        diag = []
    whole = expected(rules, f'{name}:main')
    if rc in (124, 137) and not whole:
        print(f'fail {test} # ran out of time after {cases} cases')
        return
    if cases and planned is not None and cases < planned and not whole:
        print(f'fail {test} # ended after {cases} of {planned} cases, exit {rc}')
        return
    if cases:
        note = f'{cases} cases, {fails} failed, {xfails} expected to fail'
        if xpass:
            note += f', {xpass} passed though listed'
        print(('fail' if fails else 'ok') + f' {test} # {note}')
        return
    if rc == 4 or (rc != 0 and planned is None and skip_msg):
        print(f'skip {test} # {skip_msg or "the test skipped itself"}')
    elif rc == 0:
        print(f'ok {test} # no cases, exit 0')
    elif whole:
        print(f'ok {test} # XFAIL {whole}')
    else:
        tail = ' | '.join(log.strip().splitlines()[-3:])
        print(f'fail {test} # exit {rc}, no KTAP cases: {tail[:300]}')


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rules = read_expect(sys.argv[1], sys.argv[2])
    results = sys.argv[3]
    for test in sys.argv[4:]:
        base = f'{results}/{test.replace("/", "_")}'
        try:
            with open(base + '.log', encoding='utf-8', errors='replace') as f:
                log = f.read()
            with open(base + '.rc', encoding='utf-8') as f:
                rc = int(f.read().strip() or 1)
        except (OSError, ValueError):
            print(f'fail {test} # never ran (the guest ended before it)')
            continue
        judge(rules, test, log, rc)


if __name__ == '__main__':
    main()
