#!/usr/bin/env python3
"""Every `unsafe` block and `unsafe impl` in the project's Rust sources carries a `// SAFETY:`
comment: on the lines just above it (a comment block, possibly above the statement that opens
the block) or on its own line. Prints each one without and exits 1 if any."""
import pathlib
import re
import sys

ROOTS = ["crates", "python/src", "perf/rust", "interop", "fuzz/src", "fuzz/fuzz_targets"]
UNSAFE = re.compile(r"\bunsafe\s*(\{|impl\b)")
missing = []
for root in ROOTS:
    for path in sorted(pathlib.Path(root).rglob("*.rs")):
        if "target" in path.parts:
            continue
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            code = line.split("//", 1)[0]
            if not UNSAFE.search(code):
                continue
            # The comment may sit above a multi-line statement: look back over the comment
            # block and up to 4 code lines of the statement the block belongs to.
            j, ok, code_lines = i, "SAFETY" in line, 0
            while not ok and j > 0 and code_lines <= 4:
                j -= 1
                prev = lines[j].strip()
                if "SAFETY" in prev:
                    ok = True
                elif not prev.startswith("//") and not prev.startswith("#["):
                    code_lines += 1
                    if prev.endswith(";") or prev.endswith("}") or prev == "":
                        break
            if not ok:
                missing.append(f"{path}:{i + 1}: {line.strip()}")
for m in missing:
    print(m)
print(f"{len(missing)} unsafe block(s) without a SAFETY comment", file=sys.stderr)
sys.exit(1 if missing else 0)
