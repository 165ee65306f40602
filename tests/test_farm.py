"""c63-farm on a local Dask cluster of two workers, CPU backend
(docs/farm.md): its streams against one c63-enc run, a worker killed in the
middle of a chunk, a job resumed after it was stopped, bad input and
arguments, and decoding against c63-dec. The workers encode and decode with
libc63 in their own process (the path the GPU workers take, on the CPU
backend here), with c63-enc and c63-dec when asked, and where they find no
libc63.

  test_farm.py BUILD_TOOLS_DIR
(c63-farm, c63-enc, c63-dec and c63-synth of the build; c63-farm names the
build's libc63.so.1). Skips (exit 77) when Dask is not installed.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import ctypes
import json
import logging
import os
import re
import resource
import subprocess
import sys
import tempfile
import unittest

try:
    import distributed
except ImportError:
    print("SKIP: Dask is not installed (tools/setup-debian.sh installs it)")
    sys.exit(77)

TOOLS = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else None
W, H = 352, 288
FRAME = W * H * 3 // 2
cluster = client = None


def tool(name):
    return os.path.join(TOOLS, name)


def setUpModule():
    global cluster, client
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    client = distributed.Client(cluster)


def tearDownModule():
    client.wait_for_workers(2, timeout=20)
    client.close()
    cluster.close()


def farm(*args, env=None, scheduler=True, preexec_fn=None):
    """Run c63-farm; returns (exit status, standard error)."""
    cmd = [sys.executable, tool("c63-farm")] + list(args[:1])
    if scheduler:
        cmd += ["--scheduler", cluster.scheduler_address]
    cmd += list(args[1:])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})), preexec_fn=preexec_fn)
    return proc.returncode, proc.stderr


def c63_enc(*args):
    subprocess.run([tool("c63-enc"), "--quiet"] + list(args), check=True)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def keyframe_flags(stream):
    """The keyframe flag of every frame (docs/format.md 2.5)."""
    flags, pos = [], stream.find(b"\xff\xd8\xff\xdb")
    while pos >= 0:
        flags.append(stream[pos + 220])
        pos = stream.find(b"\xff\xd8\xff\xdb", pos + 4)
    return flags


class FarmCase(unittest.TestCase):
    frames = 48

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="c63-farm-test.")
        cls.dir = cls.tmp.name
        cls.clip = os.path.join(cls.dir, "clip.yuv")
        subprocess.run([tool("c63-synth"), "-w", str(W), "-h", str(H), "-f", str(cls.frames),
                        cls.clip], check=True, stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def reference(self, *args):
        out = self.path("ref-%s.c63" % "_".join(args))
        if not os.path.exists(out):
            c63_enc("-w", str(W), "-h", str(H), *args, "-o", out, self.clip)
        return read(out)

    def encode(self, out, *args, env=None, scheduler=True, input=None):
        return farm("encode", "-w", str(W), "-h", str(H), *args, "-o", self.path(out),
                    input or self.clip, env=env, scheduler=scheduler)

    def assertNoOutput(self, name):
        self.assertEqual([n for n in os.listdir(self.dir) if name in n], [])


class Identity(FarmCase):
    def test_aligned_chunks_equal_one_run(self):
        # 1, 2, 3 and 6 keyframe intervals per chunk; 16 leaves a shorter
        # last chunk, 48 is the whole clip in one. The workers encode with
        # libc63 in their own process, the frames read by one thread, or
        # by three into a ring of six buffers.
        for chunk, readers in (("8", "1"), ("16", "3"), ("24", "1"), ("48", "3")):
            with self.subTest(chunk=chunk, readers=readers):
                rc, err = self.encode("id%s.c63" % chunk, "-k", "8", "--chunk-frames", chunk,
                                      "--io-threads", readers, "--stats")
                self.assertEqual(rc, 0, err)
                self.assertEqual(read(self.path("id%s.c63" % chunk)), self.reference("-k", "8"))
                self.assertNotIn("differs", err)
                self.assertIn("(libc63 cpu)", err)
                self.assertNotIn("(c63-enc)", err)

    def test_c63_enc_engine_equals_one_run(self):
        rc, err = self.encode("tool.c63", "-k", "8", "--chunk-frames", "16", "--engine",
                              "c63-enc", "--stats")
        self.assertEqual(rc, 0, err)
        self.assertIn("(c63-enc)", err)
        self.assertNotIn("(libc63", err)
        self.assertEqual(read(self.path("tool.c63")), self.reference("-k", "8"))

    def test_without_libc63_the_tools_encode(self):
        # c63-farm next to the tools, its libc63 nowhere: the workers (of a
        # cluster of its own: this one's have loaded libc63) find none and
        # run c63-enc and c63-dec.
        try:
            ctypes.CDLL("libc63.so.1")
            self.skipTest("the dynamic loader finds a libc63")
        except OSError:
            pass
        folder = self.path("nolib")
        os.mkdir(folder)
        for name in ("c63-enc", "c63-dec"):
            os.symlink(tool(name), os.path.join(folder, name))
        with open(tool("c63-farm")) as f:
            script = re.sub(r'LIBC63 = ".*"', 'LIBC63 = "%s"' % self.path("missing.so"), f.read())
        with open(os.path.join(folder, "c63-farm"), "w") as f:
            f.write(script)
        run = [sys.executable, os.path.join(folder, "c63-farm")]
        proc = subprocess.run(run + ["encode", "--workers", "2", "-w", str(W), "-h", str(H),
                                     "-k", "8", "--chunk-frames", "16", "--stats", "-o",
                                     self.path("nolib.c63"), self.clip],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("the tools, no libc63 here", proc.stderr)
        self.assertIn("(c63-enc)", proc.stderr)
        self.assertEqual(read(self.path("nolib.c63")), self.reference("-k", "8"))
        proc = subprocess.run(run + ["decode", "--workers", "2", "--chunk-frames", "16",
                                     "--stats", "-o",
                                     self.path("nolib.yuv"), self.path("nolib.c63")],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("(c63-dec)", proc.stderr)
        c63_dec_ref = subprocess.run([tool("c63-dec"), "--quiet", self.path("nolib.c63"),
                                      self.path("nolib-ref.yuv")])
        self.assertEqual(c63_dec_ref.returncode, 0)
        self.assertEqual(read(self.path("nolib.yuv")), read(self.path("nolib-ref.yuv")))

    def test_default_chunks_and_rd_mode_equal_one_run(self):
        rc, err = self.encode("rd.c63", "-k", "10", "-m", "rd", "-q", "40", "--fps", "10")
        self.assertEqual(rc, 0, err)
        self.assertIn("chunks of 20 frames", err)  # 2 s at 10 fps
        self.assertEqual(read(self.path("rd.c63")),
                         self.reference("-k", "10", "-m", "rd", "-q", "40"))

    def test_local_cluster_of_its_own(self):
        rc, err = self.encode("local.c63", "-k", "8", "--chunk-frames", "16", "--workers", "2",
                              scheduler=False)
        self.assertEqual(rc, 0, err)
        self.assertIn("on 2 workers", err)
        self.assertEqual(read(self.path("local.c63")), self.reference("-k", "8"))


class KeyframePerChunk(FarmCase):
    def check_decodes(self, name, keyframes_at):
        stream = read(self.path(name))
        flags = keyframe_flags(stream)
        self.assertEqual(len(flags), self.frames)
        self.assertEqual([i for i, f in enumerate(flags) if f], keyframes_at)
        dec = subprocess.run([tool("c63-dec"), "--quiet", self.path(name), self.path(name + ".yuv")],
                             capture_output=True, text=True)
        self.assertEqual(dec.returncode, 0, dec.stderr)
        self.assertEqual(os.path.getsize(self.path(name + ".yuv")), self.frames * FRAME)

    def test_unaligned_chunks_start_with_keyframes(self):
        rc, err = self.encode("unaligned.c63", "-k", "8", "--chunk-frames", "12")
        self.assertEqual(rc, 0, err)
        self.assertIn("differs from one c63-enc run", err)
        self.check_decodes("unaligned.c63", [0, 8, 12, 20, 24, 32, 36, 44])

    def test_only_first_keyframe_gives_one_per_chunk(self):
        rc, err = self.encode("k0.c63", "-k", "0", "--chunk-frames", "20")
        self.assertEqual(rc, 0, err)
        self.assertIn("-k 0", err)
        self.check_decodes("k0.c63", [0, 20, 40])


class RateControl(FarmCase):
    frames = 100  # 4 s at 25 fps: two chunks of the default 2 s

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        subprocess.run([tool("c63-synth"), "-w", str(W), "-h", str(H), "-f", str(cls.frames),
                        "--scene", "natural", cls.clip], check=True, stdout=subprocess.DEVNULL)

    def test_bitrate_of_the_whole_within_5_percent(self):
        for mode in ("abr", "cbr"):
            with self.subTest(mode=mode):
                rc, err = self.encode(mode + ".c63", "-b", "1200", "--rate-control", mode,
                                      "-k", "50")
                self.assertEqual(rc, 0, err)
                self.assertIn("2 chunks of 50 frames", err)
                kbps = os.path.getsize(self.path(mode + ".c63")) * 8 * 25 / self.frames / 1000
                self.assertLess(abs(kbps - 1200) / 1200, 0.05, "%.1f kbit/s" % kbps)

    def test_one_chunk_is_c63_enc_run(self):
        # The libc63 workers fill the parameters from c63-enc's options as
        # c63-enc does: with the whole clip in one chunk, rate control too
        # gives c63-enc's bytes.
        args = ("-b", "900", "--rate-control", "cbr", "--buffer", "400", "--fps", "30",
                "-q", "30", "-r", "8", "-m", "rd")
        rc, err = self.encode("one.c63", *args, "--chunk-frames", str(self.frames), "--stats")
        self.assertEqual(rc, 0, err)
        self.assertIn("(libc63 cpu)", err)
        self.assertEqual(read(self.path("one.c63")), self.reference(*args))


class Faults(FarmCase):
    def test_killed_worker_is_retried(self):
        before = set(client.scheduler_info()["workers"])
        rc, err = self.encode("killed.c63", "-k", "8", "--chunk-frames", "16",
                              "--work-dir", self.path("work-killed"),
                              env={"C63_FARM_TEST_KILL_CHUNK": "1"})
        self.assertEqual(rc, 0, err)
        # The hook's marker: chunk 1's first attempt killed its worker.
        self.assertEqual(len([n for n in os.listdir(self.path("work-killed"))
                              if n.startswith("killed-")]), 1)
        client.wait_for_workers(2, timeout=20)
        self.assertNotEqual(set(client.scheduler_info()["workers"]), before)
        self.assertEqual(read(self.path("killed.c63")), self.reference("-k", "8"))

    def test_stopped_job_resumes(self):
        args = ("-k", "8", "--chunk-frames", "8", "--work-dir", self.path("work-resume"))
        rc, err = self.encode("resumed.c63", *args, env={"C63_FARM_TEST_STOP_AFTER": "2"})
        self.assertEqual(rc, 1, err)
        self.assertNoOutput("resumed.c63")
        rc, err = self.encode("resumed.c63", *args)
        self.assertEqual(rc, 0, err)
        done = int(err.split("resuming: ")[1].split()[0])
        self.assertGreaterEqual(done, 2)
        self.assertEqual(read(self.path("resumed.c63")), self.reference("-k", "8"))
        self.assertFalse(os.path.exists(self.path("work-resume")))  # removed after success

    def test_other_parameters_do_not_reuse_chunks(self):
        args = ("--chunk-frames", "8", "--work-dir", self.path("work-params"))
        rc, err = self.encode("p.c63", "-k", "8", *args, env={"C63_FARM_TEST_STOP_AFTER": "2"})
        self.assertEqual(rc, 1, err)
        rc, err = self.encode("p.c63", "-k", "8", "-q", "30", *args)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("resuming", err)
        self.assertEqual(read(self.path("p.c63")), self.reference("-k", "8", "-q", "30"))


class ChunkEncoder(FarmCase):
    """A libc63 worker encodes a chunk in C (tools/farm_worker.h), with an
    encoder and a ring of pictures kept from chunk to chunk: a range at an
    offset gives the bytes of c63-enc's run on that range, whatever the
    chunk before it; an input shorter than the chunk, or an output that
    cannot be written, fails it with a message."""

    frames = 24

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "..", "tools", "farm"))
        from c63farm import inprocess, libc63
        cls.inprocess, cls.libc63 = inprocess, libc63
        lib = libc63.load([os.path.join(os.path.dirname(TOOLS), "c63", "libc63.so.1")])
        worker = libc63.load_worker([tool("libc63farm.so")])
        cls.enc = inprocess.Encoder(lib, worker, ["-w", str(W), "-h", str(H), "-k", "8",
                                                  "-t", "1"])

    @classmethod
    def tearDownClass(cls):
        cls.enc.free()
        super().tearDownClass()

    def chunk(self, first, frames, out):
        in_fd = os.open(self.clip, os.O_RDONLY)
        out_fd = os.open(self.path(out), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            return self.enc.encode(in_fd, first * FRAME, frames, 3, out_fd)
        finally:
            os.close(in_fd)
            os.close(out_fd)

    def test_ranges_as_c63_enc(self):
        for first, frames in ((0, 8), (8, 16), (5, 3), (16, 8)):
            with self.subTest(first=first, frames=frames):
                size = self.chunk(first, frames, "range.c63")
                want = self.path("range-ref.c63")
                with open(self.clip, "rb") as f:
                    f.seek(first * FRAME)
                    with open(self.path("range.yuv"), "wb") as part:
                        part.write(f.read(frames * FRAME))
                c63_enc("-w", str(W), "-h", str(H), "-k", "8", "-o", want,
                        self.path("range.yuv"))
                self.assertEqual(read(self.path("range.c63")), read(want))
                self.assertEqual(size, len(read(want)))

    def failing_chunk(self, first, frames, out_path):
        """A chunk that fails, on an encoder of its own (one that failed
        may still read its ring, so it is never used again)."""
        enc = self.inprocess.Encoder(self.enc.lib, self.enc.worker,
                                     ["-w", str(W), "-h", str(H), "-t", "1"])
        in_fd = os.open(self.clip, os.O_RDONLY)
        out_fd = os.open(out_path, os.O_WRONLY)
        try:
            enc.encode(in_fd, first * FRAME, frames, 2, out_fd)
        finally:
            enc.free()
            os.close(in_fd)
            os.close(out_fd)

    def test_short_input_fails(self):
        with open(self.path("short.c63"), "wb"):
            pass
        with self.assertRaisesRegex(self.libc63.Failed, "shorter"):
            self.failing_chunk(20, 8, self.path("short.c63"))

    def test_failed_write_fails(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        with self.assertRaisesRegex(self.libc63.Failed, "writing"):
            self.failing_chunk(0, 8, "/dev/full")


class BadInput(FarmCase):
    """Each fails before any chunk runs: one message, no output, no work folder."""

    def check_fails(self, status, message, *args, input=None, command="encode"):
        out = "bad.out"
        if command == "encode":
            rc, err = self.encode(out, *args, input=input)
        else:
            rc, err = farm("decode", *args, "-o", self.path(out), input)
        self.assertEqual(rc, status, err)
        self.assertIn(message, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertNoOutput(out)

    def test_bad_raw_input(self):
        empty, short, partial = self.path("empty.yuv"), self.path("short.yuv"), self.path("p.yuv")
        data = read(self.clip)
        for path, size in ((empty, 0), (short, FRAME // 2), (partial, 3 * FRAME + 100)):
            with open(path, "wb") as f:
                f.write(data[:size])
        self.check_fails(1, "No such file", input=self.path("missing.yuv"))
        self.check_fails(1, "directory", input=self.dir)
        self.check_fails(1, "no complete frame", input=empty)
        self.check_fails(1, "no complete frame", input=short)
        self.check_fails(1, "partial frame", input=partial)
        rc, err = farm("encode", "-w", str(W), "-h", str(H), "-o",
                       self.path("no-such-folder/out.c63"), self.clip)
        self.assertEqual(rc, 1, err)
        self.assertIn("its folder does not exist", err)

    def test_bad_arguments(self):
        self.check_fails(2, "quality", "-q", "0")
        self.check_fails(2, "unrecognized arguments", "--no-such-option")
        self.check_fails(2, "--chunk-frames must be at least 1", "--chunk-frames", "0")
        self.check_fails(2, "invalid int value", "--chunk-frames", "many")
        rc, err = farm("encode", "-w", str(W), "-h", str(H), "-o", self.clip, self.clip)
        self.assertEqual(rc, 2, err)
        self.assertIn("is the input", err)
        rc, err = farm("transcode", "-o", "x", "y")
        self.assertEqual(rc, 2, err)

    def test_bad_stream(self):
        with open(self.path("empty.c63"), "wb"):
            pass
        self.check_fails(1, "not a Codec63 stream", input=self.clip, command="decode")
        self.check_fails(1, "is empty", input=self.path("empty.c63"), command="decode")
        self.check_fails(1, "No such file", input=self.path("missing.c63"), command="decode")

    def test_without_dask(self):
        # The modules set to None cannot be imported: as if not installed.
        code = ("import runpy, sys; sys.modules['distributed'] = sys.modules['dask'] = None; "
                "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
        proc = subprocess.run([sys.executable, "-c", code, tool("c63-farm"), "encode", "-w",
                               str(W), "-h", str(H), "-o", self.path("nodask.c63"), self.clip],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("c63-farm needs Dask", proc.stderr)
        self.assertNoOutput("nodask.c63")


def gst_launch(*pipeline):
    subprocess.run(["gst-launch-1.0", "-q"] + " ".join(pipeline).split(), check=True)


class MediaInput(FarmCase):
    """Input that GStreamer decodes: the same bytes as c63-enc over the
    decoded frames (352 and 176 are multiples of 4: GStreamer's I420 rows
    are then the raw file's)."""

    def check_media(self, name, encoder, mux, fps, k, chunk):
        media, raw = self.path(name), self.path(name + ".yuv")
        gst_launch("videotestsrc num-buffers=60 pattern=ball !",
                   "video/x-raw,width=%d,height=%d,framerate=%s !" % (W, H, fps),
                   encoder, "!", mux, "! filesink location=" + media)
        gst_launch("filesrc location=" + media, "! decodebin ! videoconvert !",
                   "video/x-raw,format=I420 ! filesink location=" + raw)
        ref = self.path(name + ".ref.c63")
        c63_enc("-w", str(W), "-h", str(H), "-k", k, "--fps", fps, "-o", ref, raw)
        rc, err = farm("encode", "-k", k, "--chunk-frames", chunk, "-o", self.path(name + ".c63"),
                       media)
        self.assertEqual(rc, 0, err)
        self.assertEqual(read(self.path(name + ".c63")), read(ref))

    def test_avi_of_jpeg(self):
        self.check_media("ball.avi", "jpegenc", "avimux", "25/1", "8", "16")

    def test_webm_with_millisecond_timestamps(self):
        # 30000/1001 fps in a container of millisecond timestamps.
        self.check_media("ball.webm", "vp8enc keyframe-max-dist=25", "webmmux", "30000/1001",
                         "10", "20")

    def test_undecodable_file(self):
        junk = self.path("junk.mkv")
        with open(junk, "wb") as f:
            f.write(b"no video here\n" * 100)
        rc, err = farm("encode", "-o", self.path("junk.c63"), junk)
        self.assertEqual(rc, 1, err)
        self.assertIn("cannot decode", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertNoOutput("junk.c63")


class Join(unittest.TestCase):
    """The joiner (c63farm.jobdir): parts across segment and page
    boundaries, empty ones and ranges of a file give their concatenation,
    through shared mappings of the output and through the copies that
    stand in where the output cannot be mapped; a part that shrank fails
    the join and leaves no output."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "..", "tools", "farm"))
        from c63farm import FarmError, jobdir
        cls.jobdir, cls.FarmError = jobdir, FarmError

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="c63-join-test.")
        self.saved = (self.jobdir.SEGMENT_BYTES, self.jobdir._map_into)
        self.jobdir.SEGMENT_BYTES = 3 * 4096 + 5  # segments not page-aligned

    def tearDown(self):
        self.jobdir.SEGMENT_BYTES, self.jobdir._map_into = self.saved
        self.dir.cleanup()

    def parts(self):
        paths, want = [], b""
        for i, size in enumerate((70001, 0, 4096, 12289, 1, 40000)):
            data = bytes((i * 7 + k) % 251 for k in range(size))
            path = os.path.join(self.dir.name, "part%d" % i)
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
            want += data
        # a range of the first part, as decoding joins pieces of a stream
        paths.append((paths[0], 123, 30000))
        want += want[123:30123]
        return paths, want

    def test_mapped_and_copied(self):
        mapped = self.jobdir._map_into
        for how, map_into in (("mapped", mapped), ("copied", lambda *a: False)):
            with self.subTest(how=how):
                self.jobdir._map_into = map_into
                paths, want = self.parts()
                out = os.path.join(self.dir.name, "out-" + how)
                self.jobdir.join_files(paths, out)
                self.assertEqual(read(out), want)

    def test_shrunk_part_fails(self):
        paths, _ = self.parts()
        out = os.path.join(self.dir.name, "out")
        joiner = self.jobdir.Joiner(out, 2)
        joiner.add(0, paths[0])
        joiner.add(1, (paths[3], 0, 20000))  # says 20000 bytes; the file has 12289
        with self.assertRaises(self.FarmError):
            joiner.finish()
        self.assertFalse(os.path.exists(out))
        self.assertEqual([n for n in os.listdir(self.dir.name) if n.startswith(".out")], [])


class GpuWorkers(FarmCase):
    """The local cluster of GPU workers, without a GPU: each worker pinned to
    its own with CUDA_VISIBLE_DEVICES, declaring GPU=1."""

    def test_each_worker_sees_one_gpu(self):
        # In a process of its own: the package imported here, where this
        # module's scheduler runs, would make the scheduler send the
        # package's functions to the workers by name (recent distributed
        # pickles tasks again on the scheduler), and the workers have none.
        code = """if True:
            import json, os, sys
            import distributed
            sys.path.insert(0, sys.argv[1])
            from c63farm import cluster
            gpu_cluster = cluster._gpu_cluster(distributed, ["3", "5"])
            with distributed.Client(gpu_cluster) as client:
                seen = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
                workers = client.scheduler_info()["workers"].values()
                print(json.dumps([sorted(seen.values()), [w["resources"] for w in workers]]))
            gpu_cluster.close()
        """
        farm_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "farm")
        proc = subprocess.run([sys.executable, "-c", code, farm_dir], capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        seen, resources = json.loads(proc.stdout.strip().splitlines()[-1])
        self.assertEqual(seen, ["3", "5"])
        self.assertEqual(resources, [{"GPU": 1}] * 2)

    def test_no_gpu_for_cuda_backend(self):
        rc, err = self.encode("nogpu.c63", "--backend", "cuda", scheduler=False,
                              env={"CUDA_VISIBLE_DEVICES": ""})
        self.assertEqual(rc, 1, err)
        self.assertIn("shows no GPU", err)
        self.assertNoOutput("nogpu.c63")

    def test_scheduler_without_gpu_workers(self):
        rc, err = self.encode("nogpu2.c63", "--backend", "cuda")
        self.assertEqual(rc, 1, err)
        self.assertIn("no worker declares a GPU", err)
        self.assertNoOutput("nogpu2.c63")


class Decode(FarmCase):
    def decode_both(self, stream, *args, env=None, out="farm.yuv"):
        ref = subprocess.run([tool("c63-dec"), "--quiet", stream, self.path("ref.yuv")],
                             capture_output=True, text=True)
        rc, err = farm("decode", "--chunk-frames", "8", "--stats", *args, "-o",
                       self.path(out), stream, env=env)
        return ref.returncode, rc, err

    def k8_stream(self):
        stream = self.path("k8.c63")
        if not os.path.exists(stream):
            c63_enc("-w", str(W), "-h", str(H), "-k", "8", "-o", stream, self.clip)
        return stream

    def test_equal_to_c63_dec(self):
        # libc63 in the workers, the pictures copied into their place in
        # the output by one thread, or in slices by three.
        for threads in ("1", "3"):
            with self.subTest(threads=threads):
                ref_rc, rc, err = self.decode_both(self.k8_stream(), "--io-threads", threads)
                self.assertEqual((ref_rc, rc), (0, 0), err)
                self.assertIn("in 6 pieces", err)
                self.assertIn("(libc63)", err)
                self.assertNotIn("(c63-dec)", err)
                self.assertEqual(read(self.path("farm.yuv")), read(self.path("ref.yuv")))

    def test_padded_pictures_equal_to_c63_dec(self):
        # 100x50: the library's pictures have padded rows, which it copies
        # into one packed picture before the write.
        clip, stream = self.path("odd.yuv"), self.path("odd.c63")
        subprocess.run([tool("c63-synth"), "-w", "100", "-h", "50", "-f", "24", clip],
                       check=True, capture_output=True)
        c63_enc("-w", "100", "-h", "50", "-k", "8", "-o", stream, clip)
        ref_rc, rc, err = self.decode_both(stream, "--io-threads", "3")
        self.assertEqual((ref_rc, rc), (0, 0), err)
        self.assertIn("(libc63)", err)
        self.assertEqual(read(self.path("farm.yuv")), read(self.path("ref.yuv")))

    def test_c63_dec_engine_equal_to_c63_dec(self):
        ref_rc, rc, err = self.decode_both(self.k8_stream(), "--engine", "c63-dec")
        self.assertEqual((ref_rc, rc), (0, 0), err)
        self.assertIn("(c63-dec)", err)
        self.assertEqual(read(self.path("farm.yuv")), read(self.path("ref.yuv")))

    def test_stopped_job_resumes(self):
        work = ("--work-dir", self.path("work-decode"))
        ref_rc, rc, err = self.decode_both(self.k8_stream(), *work, out="resumed.yuv",
                                           env={"C63_FARM_TEST_STOP_AFTER": "2"})
        self.assertEqual(rc, 1, err)
        self.assertNoOutput("resumed.yuv")
        ref_rc, rc, err = self.decode_both(self.k8_stream(), *work, out="resumed.yuv")
        self.assertEqual((ref_rc, rc), (0, 0), err)
        self.assertEqual(read(self.path("resumed.yuv")), read(self.path("ref.yuv")))
        self.assertFalse(os.path.exists(self.path("work-decode")))

    def test_no_room_for_the_pictures(self):
        # The pictures' file is allocated before any worker writes it (a
        # write through a mapping past the room there would kill the
        # worker): here a file size limit of 1 MiB stands for a full disk.
        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

        rc, err = farm("decode", "--chunk-frames", "8", "-o", self.path("noroom.yuv"),
                       self.k8_stream(), preexec_fn=limit)
        self.assertEqual(rc, 1, err)
        self.assertIn("no room for the decoded pictures", err)
        self.assertNoOutput("noroom.yuv")

    def test_damaged_stream_as_c63_dec(self):
        # A delta frame's data overwritten: c63-dec skips it and the frames
        # up to the next keyframe; the farm's pieces, cut at keyframes, too.
        data = bytearray(self.reference("-k", "8"))
        start = 0
        for _ in range(12):
            start = data.find(b"\xff\xd8\xff\xdb", start + 1)
        del data[start + 700:start + 764]
        stream = self.path("damaged.c63")
        with open(stream, "wb") as f:
            f.write(data)
        ref_rc, rc, err = self.decode_both(stream)
        self.assertEqual((ref_rc, rc), (1, 1), err)
        self.assertIn("piece 1", err)
        # the damaged piece through c63-dec, the others in place
        self.assertIn("(c63-dec)", err)
        self.assertIn("(libc63)", err)
        self.assertEqual(read(self.path("farm.yuv")), read(self.path("ref.yuv")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
