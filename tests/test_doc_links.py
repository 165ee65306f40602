#!/usr/bin/env python3
"""Every relative link in the repository's Markdown files must lead somewhere:
the file must exist and, for a link with #anchor into a Markdown file, a
heading must make that anchor (GitHub's rule: lower case, punctuation
dropped, spaces to hyphens). Also refuses references that lead nowhere:
"the brief" and "issue N" (the issue tracker is not part of the tree).
Usage: test_doc_links.py SOURCE_DIR"""
import os
import re
import sys

root = sys.argv[1]
link_re = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
dead_re = re.compile(r"\bthe brief\b|\bissue \d+\b", re.IGNORECASE)


def anchors(path):
    out = set()
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        title = re.sub(r"[^\w\- ]", "", title)
        out.add(title.replace(" ", "-"))
    return out


failures = []
checked = 0
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if not d.startswith(".") and not d.startswith("build")
                   and d != "subprojects"]
    for name in filenames:
        if not name.endswith(".md"):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, root)
        text = open(path, encoding="utf-8").read()
        for n, line in enumerate(text.splitlines(), 1):
            if dead_re.search(line):
                failures.append("%s:%d: a reference that leads nowhere: %s" % (rel, n, line.strip()))
            for target in link_re.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # http(s), mailto: not checked offline
                checked += 1
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(dirpath, file_part)) if file_part else path
                if not os.path.exists(dest):
                    failures.append("%s:%d: %s: no such file" % (rel, n, target))
                elif anchor and dest.endswith(".md") and anchor.lower() not in anchors(dest):
                    failures.append("%s:%d: %s: no such heading" % (rel, n, target))

for f in failures:
    print(f)
print("%d relative links checked, %d problems" % (checked, len(failures)))
sys.exit(1 if failures else 0)
