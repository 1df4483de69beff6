#!/usr/bin/env python3
"""scripts/ab_trees.sh without a GPU: --export in a scratch git repository, and the alternating
rounds with a stand-in bench (TC_AB_BENCH) that writes each side's JSON, joined by ab_compare.py.

    python3 tests/cpu/bench/test_ab_trees.py scripts/ab_trees.sh
"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "scripts", "ab_trees.sh"))
HELPERS = [os.path.join(os.path.dirname(SCRIPT), name) for name in ("ab_compare.py", "ab_rounds.sh")]

# Side A (its JIT cache under .ab/old) takes 10 us a call, B 9 us; cuBLAS 9.9 us on both. It
# also records its arguments, to check that both sides get the bench's.
FAKE_BENCH = r"""#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
out = args[args.index("--json") + 1]
a = "/.ab/old/" in __import__("os").environ["TILECAST_CACHE_DIR"]
with open(out + ".args", "w") as f:
    f.write(" ".join(args[:args.index("--json")]))
row = {"suite": "custom", "label": "512x512x512", "tilecast_config": "auto",
       "tilecast": {"timing": {"ran": True, "median_us": 10.0 if a else 9.0}, "verify": {"pass": True}},
       "cublas": {"timing": {"ran": True, "median_us": 9.9}}}
json.dump({"rows": [row]}, open(out, "w"))
"""


def tree(root):
    """A stand-in checkout: the script and its helpers in scripts/."""
    os.makedirs(os.path.join(root, "scripts"))
    for src in [SCRIPT] + HELPERS:
        shutil.copy(src, os.path.join(root, "scripts"))
    return os.path.join(root, "scripts", "ab_trees.sh")


class AbTrees(unittest.TestCase):
    def test_export_writes_the_revision_into_the_ignored_folder(self):
        with tempfile.TemporaryDirectory() as root:
            script = tree(root)
            run = lambda *a: subprocess.run(a, cwd=root, capture_output=True, text=True, check=True).stdout
            run("git", "init", "-q")
            with open(os.path.join(root, "kernel.cuh"), "w") as f:
                f.write("old\n")
            run("git", "add", "kernel.cuh")
            run("git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "old")
            rev = run("git", "rev-parse", "--short=12", "HEAD").strip()
            with open(os.path.join(root, "kernel.cuh"), "w") as f:
                f.write("new\n")
            out = run(script, "--export", "HEAD")
            self.assertIn(rev, out)
            with open(os.path.join(root, ".ab", "old", "kernel.cuh")) as f:
                self.assertEqual(f.read(), "old\n", "the revision, not the working tree")
            with open(os.path.join(root, ".ab", "REV")) as f:
                self.assertEqual(f.read().strip(), rev)

    def test_rounds_alternate_and_the_comparison_joins_them(self):
        with tempfile.TemporaryDirectory() as root:
            script = tree(root)
            os.makedirs(os.path.join(root, ".ab", "old"))
            with open(os.path.join(root, ".ab", "REV"), "w") as f:
                f.write("0123456789ab\n")
            fake = os.path.join(root, "fake_bench")
            with open(fake, "w") as f:
                f.write(FAKE_BENCH)
            os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
            out_dir = os.path.join(root, "out")
            env = dict(os.environ, TC_AB_BENCH=fake, TC_AB_ROUNDS="2", OUT=out_dir)
            r = subprocess.run([script, "--shape", "512,512,512", "--iters", "5"], cwd=root, env=env,
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            sides = [l.split()[1] for l in r.stdout.splitlines() if l.startswith("side ")]
            self.assertEqual(sides, ["A", "B", "A", "B"])
            self.assertIn("A = 0123456789ab", r.stdout)
            row = [l for l in r.stdout.splitlines() if "512x512x512" in l]
            self.assertEqual(len(row), 1, r.stdout)
            self.assertEqual(row[0].split()[3:6], ["10.0", "9.0", "0.900"])
            for name in ("ab_A1.json", "ab_B2.json"):
                with open(os.path.join(out_dir, name + ".args")) as f:
                    self.assertEqual(f.read(), "--shape 512,512,512 --iters 5")

    def test_no_exported_tree_is_a_clear_error(self):
        with tempfile.TemporaryDirectory() as root:
            r = subprocess.run([tree(root), "--shape", "1,1,1"], cwd=root, capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--export", r.stderr)


if __name__ == "__main__":
    unittest.main()
