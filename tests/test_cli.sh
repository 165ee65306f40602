#!/bin/sh
# Command-line tests of c63-enc, c63-dec and c63-psnr.
# Usage: test_cli.sh C63_ENC C63_DEC C63_PSNR
# Needs C63_TEST_DATA and C63_TEST_YUV_DIR (set by meson) and sha256sum.
# SPDX-License-Identifier: LGPL-2.1-or-later
set -u

ENC=$1 DEC=$2 PSNR=$3
CONF=${C63_TEST_DATA:?}/conformance
YUV=${C63_TEST_YUV_DIR:?}
T=$(mktemp -d "${TMPDIR:-/tmp}/c63-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fails=0

fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# manifest field N (1-based) of the row for stream $1
field() {
  awk -F '\t' -v s="$1" -v n="$2" '$1 == s { print $n }' "$CONF/MANIFEST.tsv"
}

# the file $1 must not exist ($2 says when)
absent() {
  if [ -e "$1" ] || [ -L "$1" ]; then fail "$1 exists $2"; else echo "ok: no $(basename "$1") $2"; fi
}

# files $1 and $2 must be identical ($3 says why)
same() {
  if cmp -s "$1" "$2"; then echo "ok: $3"; else fail "$3: $1 differs from $2"; fi
}

# run CMD..., expecting a non-zero exit and stderr matching the pattern $1
expect_error() {
  pattern=$1
  shift
  "$@" >"$T/out" 2>"$T/err"
  rc=$?
  if [ $rc -eq 0 ]; then
    fail "expected failure: $*"
  elif grep -q -e "Sanitizer" -e "runtime error:" "$T/err"; then
    # a sanitizer build (meson test --setup=asan): a leak or undefined
    # behaviour on the way out fails too, whatever was said before
    fail "'$*' fails with a sanitizer report:"
    cat "$T/err"
  elif ! grep -q -e "$pattern" "$T/err"; then
    fail "stderr of '$*' lacks '$pattern':"
    cat "$T/err"
  else
    echo "ok: '$*' fails ($rc): $(head -n 1 "$T/err")"
  fi
}

# --- encoding conformance streams through the CLI, byte for byte ---
for s in pan_176x144.c63 pan_352x288_q10k7.c63 pan_352x288_q50r8.c63; do
  in=$(field "$s" 2) w=$(field "$s" 3) h=$(field "$s" 4)
  q=$(field "$s" 6) k=$(field "$s" 7) r=$(field "$s" 8)
  in=${in%.xz}
  if "$ENC" -w "$w" -h "$h" -q "$q" -k "$k" -r "$r" -o "$T/out.c63" "$YUV/$in" 2>"$T/err"; then
    if cmp -s "$T/out.c63" "$CONF/$s"; then
      echo "ok: c63-enc reproduces $s"
    else
      fail "c63-enc output differs from $s"
    fi
  else
    fail "c63-enc failed on $in:"
    cat "$T/err"
  fi
done

# stdin to stdout, with the default parameters
if "$ENC" -w 176 -h 144 -o - - <"$YUV/pan_176x144.yuv" >"$T/pipe.c63" 2>"$T/err" &&
  cmp -s "$T/pipe.c63" "$CONF/pan_176x144.c63"; then
  echo "ok: c63-enc from stdin to stdout"
else
  fail "c63-enc - -o - differs"
  cat "$T/err"
fi

# --backend cuda: the same bytes where CUDA is usable, a clear refusal elsewhere
if "$ENC" --backend cuda -w 176 -h 144 -o "$T/cuda.c63" "$YUV/pan_176x144.yuv" 2>"$T/err"; then
  cmp -s "$T/cuda.c63" "$CONF/pan_176x144.c63" && echo "ok: --backend cuda gives the same bytes" ||
    fail "--backend cuda output differs from the reference stream"
elif grep -q "cannot create the encoder" "$T/err"; then
  echo "ok: --backend cuda refused: $(cat "$T/err")"
else
  fail "--backend cuda: $(cat "$T/err")"
fi

# -m exact is the default: the reference bytes; -m rd: a smaller stream that
# c63-dec decodes, at a PSNR comparable to exact's; rd is refused on CUDA
if "$ENC" -m exact -w 176 -h 144 -o "$T/exact.c63" "$YUV/pan_176x144.yuv" 2>"$T/err" &&
  cmp -s "$T/exact.c63" "$CONF/pan_176x144.c63"; then
  echo "ok: -m exact gives the reference bytes"
else
  fail "-m exact: $(cat "$T/err")"
fi
"$ENC" -f 20 -w 176 -h 144 -o "$T/exact20.c63" "$YUV/pan_176x144.yuv" 2>"$T/err" || fail "-f 20"
if "$ENC" --mode rd -f 20 -w 176 -h 144 -o "$T/rd.c63" "$YUV/pan_176x144.yuv" 2>"$T/err" &&
  "$DEC" "$T/rd.c63" "$T/rd.yuv" 2>"$T/err" && grep -q "decoded 20 frames" "$T/err"; then
  echo "ok: -m rd: c63-dec decodes the 20 frames"
  "$DEC" "$T/exact20.c63" "$T/exact20.yuv" 2>/dev/null
  head -c $((176 * 144 * 3 / 2 * 20)) "$YUV/pan_176x144.yuv" >"$T/in20.yuv"
  p_rd=$("$PSNR" -w 176 -h 144 "$T/in20.yuv" "$T/rd.yuv" | awk '$1 == "psnr-y" { print $2 }')
  p_ex=$("$PSNR" -w 176 -h 144 "$T/in20.yuv" "$T/exact20.yuv" | awk '$1 == "psnr-y" { print $2 }')
  b_rd=$(wc -c <"$T/rd.c63") b_ex=$(wc -c <"$T/exact20.c63")
  # fewer bytes, and no more than 1 dB below exact (rd trades a little
  # quality for many bits at the same quantiser)
  if [ "$b_rd" -lt "$b_ex" ] && awk -v a="$p_rd" -v b="$p_ex" 'BEGIN { exit !(a > b - 1) }'; then
    echo "ok: -m rd: $b_rd bytes, PSNR-Y $p_rd dB (exact: $b_ex bytes, $p_ex dB)"
  else
    fail "-m rd: $b_rd bytes, PSNR-Y $p_rd dB against exact's $b_ex bytes, $p_ex dB"
  fi
else
  fail "-m rd: $(cat "$T/err")"
fi
# -m rd on the GPU gives the CPU's bytes; without a usable device (or a
# build without the CUDA backend) it is refused and leaves no output
if "$ENC" --mode rd -f 20 --backend cuda -w 176 -h 144 -o "$T/rd-cuda.c63" "$YUV/pan_176x144.yuv" \
  2>"$T/err"; then
  if cmp -s "$T/rd.c63" "$T/rd-cuda.c63"; then
    echo "ok: -m rd --backend cuda: the CPU backend's bytes"
  else
    fail "-m rd --backend cuda: not the CPU backend's bytes"
  fi
elif grep -q "CUDA" "$T/err"; then
  echo "ok: -m rd --backend cuda refused: $(cat "$T/err")"
  absent "$T/rd-cuda.c63" "after -m rd --backend cuda"
else
  fail "-m rd --backend cuda: $(cat "$T/err")"
fi

# a partial frame at the end is an error (the size is wrong, or the file
# cut) that leaves no output; --allow-partial encodes the complete frames
{ cat "$YUV/pan_176x144.yuv"; head -c 1000 "$YUV/pan_176x144.yuv"; } >"$T/partial.yuv"
expect_error "partial frame.*--allow-partial" "$ENC" -w 176 -h 144 -o "$T/partial.c63" "$T/partial.yuv"
absent "$T/partial.c63" "after a partial frame"
if "$ENC" -w 176 -h 144 --allow-partial -o "$T/partial.c63" "$T/partial.yuv" 2>"$T/err" &&
  grep -q "warning: .*partial frame" "$T/err" && cmp -s "$T/partial.c63" "$CONF/pan_176x144.c63"; then
  echo "ok: --allow-partial: a trailing partial frame is reported and ignored"
else
  fail "--allow-partial: $(cat "$T/err")"
fi

# -f limits the frame count: the first 3 frames are the stream's first 3
"$ENC" -w 176 -h 144 -f 3 -o "$T/f3.c63" "$YUV/pan_176x144.yuv" 2>"$T/err" || fail "-f 3"
if grep -q "encoded 3 frames" "$T/err"; then echo "ok: -f 3 encodes 3 frames"; else
  fail "-f 3: $(cat "$T/err")"
fi
n=$(wc -c <"$T/f3.c63")
if head -c "$n" "$CONF/pan_176x144.c63" | cmp -s - "$T/f3.c63"; then
  echo "ok: -f 3 output is a prefix of the full stream"
else
  fail "-f 3 output is not a prefix of the full stream"
fi

# --- decoding: SHA-256 of the output, frame count report ---
for s in pan_176x144.c63 testsrc_640x200.c63; do
  frames=$(field "$s" 5)
  if "$DEC" "$CONF/$s" "$T/dec.yuv" 2>"$T/err"; then
    sum=$(sha256sum "$T/dec.yuv" | cut -d ' ' -f 1)
    [ "$sum" = "$(field "$s" 10)" ] && echo "ok: c63-dec $s exact" || fail "c63-dec $s: sha256 $sum"
    grep -q "decoded $frames frames" "$T/err" && echo "ok: reports $frames frames" ||
      fail "c63-dec $s does not report $frames frames: $(cat "$T/err")"
  else
    fail "c63-dec $s failed: $(cat "$T/err")"
  fi
done
# stdin to stdout
if "$DEC" - - <"$CONF/pan_352x288.c63" 2>"$T/err" | sha256sum | grep -q "$(field pan_352x288.c63 10)"; then
  echo "ok: c63-dec from stdin to stdout"
else
  fail "c63-dec - - differs: $(cat "$T/err")"
fi

# --- PSNR tool against the manifest's figures ---
for s in pan_352x288.c63 pan_176x144.c63; do
  in=$(field "$s" 2) w=$(field "$s" 3) h=$(field "$s" 4) want=$(field "$s" 11)
  "$DEC" "$CONF/$s" "$T/dec.yuv" 2>/dev/null
  p=$("$PSNR" -w "$w" -h "$h" "$YUV/${in%.xz}" "$T/dec.yuv" | awk '$1 == "psnr-y" { print $2 }')
  if awk -v a="$p" -v b="$want" 'BEGIN { d = a - b; exit !(d < 0.015 && d > -0.015) }'; then
    echo "ok: c63-psnr gives $p dB for $s (manifest $want)"
  else
    fail "c63-psnr gives '$p' dB for $s, manifest says $want"
  fi
done

# --- corrupt streams: reported, skipped, non-zero exit, the rest decoded ---
s=$CONF/pan_176x144.c63
{ printf 'garbage'; cat "$s"; } >"$T/junk.c63"
expect_error "skipped 7 bytes" "$DEC" "$T/junk.c63" "$T/dec.yuv"
grep -q "decoded 110 frames" "$T/err" || fail "junk prefix: not all frames decoded: $(cat "$T/err")"
size=$(wc -c <"$s")
head -c $((size - 100)) "$s" >"$T/trunc.c63"
expect_error "stream ends inside the frame" "$DEC" "$T/trunc.c63" "$T/dec.yuv"
grep -q "decoded 109 frames" "$T/err" || fail "truncated: expected 109 frames: $(cat "$T/err")"
# overwrite 64 bytes in the middle of the first frame's data
{ head -c 1000 "$s"; head -c 64 /dev/zero | tr '\0' '\377'; tail -c +1065 "$s"; } >"$T/bad.c63"
expect_error "frames skipped" "$DEC" "$T/bad.c63" "$T/dec.yuv"
# delta frames before the next keyframe (frame 100) cannot be decoded
grep -q "decoded 10 frames" "$T/err" || fail "corrupt first frame: expected 10 frames: $(cat "$T/err")"
# frames that decoded are written even when others were corrupt (exit 1)
expect_error "decoded 10 frames" "$DEC" "$T/bad.c63" "$T/bad.yuv"
[ "$(wc -c <"$T/bad.yuv")" -eq $((10 * 38016)) ] && echo "ok: the 10 decoded frames are written" ||
  fail "corrupt first frame: output is not 10 frames"
expect_error "decoded 109 frames" "$DEC" "$T/trunc.c63" "$T/trunc.yuv"
[ "$(wc -c <"$T/trunc.yuv")" -eq $((109 * 38016)) ] && echo "ok: the 109 decoded frames are written" ||
  fail "truncated stream: output is not 109 frames"
# no frame at all: an error, and no (empty) output that would pass for one
: >"$T/empty.c63"
expect_error "decoded 0 frames" "$DEC" "$T/empty.c63" "$T/empty.yuv"
grep -q "empty input" "$T/err" || fail "empty stream: not called empty: $(cat "$T/err")"
absent "$T/empty.yuv" "from an empty stream"
printf 'garbage' >"$T/garbage.c63"
expect_error "no frame decoded" "$DEC" "$T/garbage.c63" "$T/garbage.yuv"
absent "$T/garbage.yuv" "from a stream without frames"

# A frame whose EOI is lost, followed by 64 MiB without FF D9: the decoder
# must give up on the frame once it is longer than the largest legal frame
# of its size, not buffer the rest of the stream. Under a 32 MiB address
# space limit, holding the 64 MiB runs out of memory. The frames after it
# still decode.
big_stream() {
  head -c 1000 "$s"
  head -c 67108864 /dev/zero
  cat "$s"
}
if ! (ulimit -v 32768 && "$DEC" "$s" "$T/mem.yuv") 2>/dev/null; then
  echo "skip: c63-dec does not run under ulimit -v 32768 (a sanitizer build?)"
else
  big_stream | (ulimit -v 32768 && "$DEC" - "$T/mem.yuv") 2>"$T/err"
  if grep -q "no end of frame marker within" "$T/err" &&
    grep -q "decoded 110 frames" "$T/err" && ! grep -q "out of memory" "$T/err"; then
    echo "ok: a frame without EOI is dropped at its size bound (64 MiB in a 32 MiB address space)"
  else
    fail "frame without EOI before 64 MiB of zeros: $(cat "$T/err")"
  fi
fi

# Several writer threads put each picture at its offset through mappings
# of 32 MiB windows of the file (tools/mapped_output.c): the same bytes as
# one thread's write(), also across window ends (15 frames of 1080p, 47 MB)
# and where no window fits the address space (each picture mapped alone;
# 176x144, since a 1080p decoder does not fit 32 MiB).
m=$CONF/mandel_1920x1080.c63
cat "$m" "$m" "$m" >"$T/mandel3.c63"
for f in "$s" "$T/mandel3.c63"; do
  "$DEC" --quiet --writers 1 "$f" "$T/w1.yuv" 2>"$T/err" || fail "c63-dec --writers 1: $(cat "$T/err")"
  "$DEC" --quiet --writers 3 "$f" "$T/w3.yuv" 2>"$T/err" || fail "c63-dec --writers 3: $(cat "$T/err")"
  same "$T/w3.yuv" "$T/w1.yuv" "c63-dec --writers 3 writes what one writer does ($(basename "$f"))"
  [ "$f" = "$s" ] && cp "$T/w1.yuv" "$T/dec-ref.yuv"
done
if (ulimit -v 32768 && "$DEC" "$s" "$T/mem.yuv") 2>/dev/null; then
  (ulimit -v 32768 && "$DEC" --quiet --writers 3 "$s" "$T/w3.yuv") 2>"$T/err" ||
    fail "c63-dec --writers 3 in a 32 MiB address space: $(cat "$T/err")"
  same "$T/w3.yuv" "$T/dec-ref.yuv" "c63-dec --writers 3 in a 32 MiB address space"
fi

# like expect_error, and the usage text must follow the message
expect_usage() {
  expect_error "$@"
  grep -q "^Usage: " "$T/err" || fail "no usage text after '$1'"
}

# --- bad arguments: non-zero exit, message, usage ---
expect_usage "not a writer thread count" "$DEC" --writers 9 "$s" "$T/w.yuv"
expect_usage "missing input file" "$ENC"
expect_usage "-o OUTPUT is required" "$ENC" -w 176 -h 144 "$YUV/pan_176x144.yuv"
expect_usage "HEIGHT are required" "$ENC" -w 176 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "size 7x144 is outside" "$ENC" -w 7 -h 144 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "quality 51 is outside" "$ENC" -w 176 -h 144 -q 51 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "search range 65 is outside" "$ENC" -w 176 -h 144 -r 65 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "not a whole number" "$ENC" -w abc -h 144 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
# a number too large for any option, or 0, is out of range, with the range
expect_usage "bitrate 4294967296 is out of range (1..1000000)" "$ENC" -b 4294967296 -w 176 -h 144 \
  -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "width 99999999999 is out of range (8..8192)" "$ENC" -w 99999999999 -h 144 \
  -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "size 0x144 is outside 8..8192" "$ENC" -w 0 -h 144 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "-f 99999999999 is out of range" "$ENC" -f 99999999999 -w 176 -h 144 -o "$T/x.c63" \
  "$YUV/pan_176x144.yuv"
expect_usage "unknown option --bogus" "$ENC" --bogus -w 176 -h 144 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "unknown rate control 'vbr'" "$ENC" --rate-control vbr -b 500 -w 176 -h 144 \
  -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "bitrate 0 kbit/s is outside" "$ENC" --rate-control abr -w 176 -h 144 \
  -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "is not a framerate" "$ENC" -b 500 --fps 25/x -w 176 -h 144 -o "$T/x.c63" \
  "$YUV/pan_176x144.yuv"

# --- rate control: -b alone is an average bitrate, reported with the result ---
for rc in abr cbr; do
  if "$ENC" --rate-control $rc -b 600 --fps 30 -w 176 -h 144 -o "$T/rc.c63" \
    "$YUV/pan_176x144.yuv" 2>"$T/err"; then
    got=$(sed -n 's/.* \([0-9.]*\) kbit\/s at 30\/1 fps (target 600)/\1/p' "$T/err")
    if [ -n "$got" ] && awk -v g="$got" 'BEGIN { exit !(g > 570 && g < 630) }' &&
      ! grep -q "out of reach" "$T/err"; then
      echo "ok: c63-enc --rate-control $rc -b 600: $got kbit/s"
    else
      fail "c63-enc --rate-control $rc -b 600: $(cat "$T/err")"
    fi
    "$DEC" "$T/rc.c63" "$T/rc.yuv" 2>/dev/null || fail "the $rc stream does not decode"
  else
    fail "c63-enc --rate-control $rc: $(cat "$T/err")"
  fi
done
# a reachable target gives no warning (above); one below what quality 1
# spends, or above what quality 50 spends, says so and what to do
if "$ENC" -b 1 -w 176 -h 144 -o "$T/rc.c63" "$YUV/pan_176x144.yuv" 2>"$T/err" &&
  grep -q "warning: the target is out of reach: .* at quality 1, the coarsest, .*-m rd" "$T/err"; then
  echo "ok: c63-enc -b 1 says the target is out of reach"
else
  fail "c63-enc -b 1: $(cat "$T/err")"
fi
if "$ENC" -b 1000000 -w 176 -h 144 -o "$T/rc.c63" "$YUV/pan_176x144.yuv" 2>"$T/err" &&
  grep -q "warning: the target is out of reach: .* at quality 50, the finest" "$T/err"; then
  echo "ok: c63-enc -b 1000000 says the target is out of reach"
else
  fail "c63-enc -b 1000000: $(cat "$T/err")"
fi
# every frame a keyframe (-k 1): each target reached, within 5%
for b in 300 500; do
  if "$ENC" -k 1 -b $b -w 176 -h 144 -o "$T/k$b.c63" "$YUV/pan_176x144.yuv" 2>"$T/err"; then
    got=$(sed -n "s/.* \([0-9.]*\) kbit\/s at 25\/1 fps (target $b)/\1/p" "$T/err")
    if [ -n "$got" ] && awk -v g="$got" -v b=$b 'BEGIN { exit !(g > 0.95 * b && g < 1.05 * b) }'; then
      echo "ok: c63-enc -k 1 -b $b: $got kbit/s"
    else
      fail "c63-enc -k 1 -b $b: $(cat "$T/err")"
    fi
  else
    fail "c63-enc -k 1 -b $b: $(cat "$T/err")"
  fi
done
# cbr: frames over the buffer even at quality 1 are reported
if "$ENC" --rate-control cbr -b 1 --buffer 100 -w 176 -h 144 -o "$T/rc.c63" \
  "$YUV/pan_176x144.yuv" 2>"$T/err" &&
  grep -q "warning: [0-9]* frames overflowed the buffer of 100 ms even at quality 1" "$T/err"; then
  echo "ok: c63-enc --rate-control cbr -b 1 --buffer 100 reports the overflows"
else
  fail "c63-enc --rate-control cbr -b 1 --buffer 100: $(cat "$T/err")"
fi
# a buffer shorter than a frame falls short of the target, and says why
if "$ENC" --rate-control cbr -b 500 --buffer 1 -w 176 -h 144 -o "$T/rc.c63" \
  "$YUV/pan_176x144.yuv" 2>"$T/err" && grep -q "warning: under the target: .*shorter than a frame" "$T/err"; then
  echo "ok: c63-enc --rate-control cbr --buffer 1 says why it is under the target"
else
  fail "c63-enc --rate-control cbr -b 500 --buffer 1: $(cat "$T/err")"
fi
expect_usage "unknown backend" "$ENC" --backend gpu -w 176 -h 144 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "unknown mode 'fast'" "$ENC" -m fast -w 176 -h 144 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "needs a value" "$ENC" -w 176 -h 144 "$YUV/pan_176x144.yuv" -o
expect_usage "must not be negative" "$ENC" -f -3 -w 176 -h 144 -o "$T/x.c63" "$YUV/pan_176x144.yuv"
expect_error "cannot open" "$ENC" -w 176 -h 144 -o "$T/x.c63" "$T/does-not-exist.yuv"
expect_error "cannot open" "$ENC" -w 176 -h 144 -o "$T/no/such/dir/x.c63" "$YUV/pan_176x144.yuv"
expect_usage "expected an input and an output" "$DEC"
expect_usage "unknown backend 'gpu'" "$DEC" --backend gpu "$CONF/pan_176x144.c63" "$T/x.yuv"
expect_usage "is not a device number" "$DEC" --device -1 "$CONF/pan_176x144.c63" "$T/x.yuv"
# --backend cpu is the default's bytes; cuda gives the same pictures or says why not
"$DEC" "$CONF/pan_176x144.c63" "$T/default.yuv" 2>/dev/null
"$DEC" --backend cpu "$CONF/pan_176x144.c63" "$T/cpu.yuv" 2>/dev/null
same "$T/default.yuv" "$T/cpu.yuv" "c63-dec --backend cpu decodes as the default"
if "$DEC" --backend cuda "$CONF/pan_176x144.c63" "$T/cuda.yuv" 2>"$T/err"; then
  same "$T/cpu.yuv" "$T/cuda.yuv" "c63-dec --backend cuda decodes as the CPU"
elif grep -q "cannot create the decoder: ." "$T/err"; then
  echo "ok: c63-dec --backend cuda without a device: $(cat "$T/err")"
else
  fail "c63-dec --backend cuda failed without a reason: $(cat "$T/err")"
fi
expect_usage "expected an input and an output" "$DEC" "$s"
expect_usage "unknown option --bogus" "$DEC" --bogus "$s" "$T/x.yuv"
expect_error "cannot open" "$DEC" "$T/does-not-exist.c63" "$T/x.yuv"
expect_usage "need -w" "$PSNR" -w 176 "$YUV/pan_176x144.yuv"

# --- outputs: never the input, never left behind by a failed run ---
O=$T/outputs
mkdir "$O"
head -c $((3 * 38016)) "$YUV/pan_176x144.yuv" >"$O/in.yuv"
cp "$O/in.yuv" "$O/in.orig"
cp "$s" "$O/in.c63"
ln -s in.yuv "$O/sym.yuv"
ln "$O/in.yuv" "$O/hard.yuv"
ln -s in.c63 "$O/sym.c63"
expect_error "is the input" "$ENC" -w 176 -h 144 -o "$O/in.yuv" "$O/in.yuv"
[ $rc -eq 2 ] || fail "output = input: exit status $rc, expected 2"
expect_error "is the input" "$ENC" -w 176 -h 144 -o "$O/sym.yuv" "$O/in.yuv"
expect_error "is the input" "$ENC" -w 176 -h 144 -o "$O/hard.yuv" "$O/in.yuv"
expect_error "is the input" "$ENC" -w 176 -h 144 -o "$O/in.yuv" "$O/sym.yuv"
expect_error "is the input" "$ENC" -w 176 -h 144 -o "$O/in.yuv" - <"$O/in.yuv"
same "$O/in.yuv" "$O/in.orig" "the input survives being named as the output of c63-enc"
expect_error "is the input" "$DEC" "$O/in.c63" "$O/in.c63"
[ $rc -eq 2 ] || fail "output = input: exit status $rc, expected 2"
expect_error "is the input" "$DEC" "$O/in.c63" "$O/sym.c63"
# (standard output can only be redirected outside expect_error)
"$DEC" "$O/in.c63" - >>"$O/in.c63" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && grep -q "is the input" "$T/err" && echo "ok: c63-dec refuses - >> its input" ||
  fail "c63-dec in - >>in ($rc): $(cat "$T/err")"
same "$O/in.c63" "$s" "the input survives being named as the output of c63-dec"

# empty input, /dev/null, a directory: an error with its reason, no output
: >"$O/empty.yuv"
expect_error "no complete frame" "$ENC" -w 176 -h 144 -o "$O/e.c63" "$O/empty.yuv"
absent "$O/e.c63" "from an empty input"
expect_error "no complete frame" "$ENC" -w 176 -h 144 -o "$O/e.c63" /dev/null
absent "$O/e.c63" "from /dev/null"
mkdir "$O/adir"
expect_error "adir: Is a directory" "$ENC" -w 176 -h 144 -o "$O/e.c63" "$O/adir"
absent "$O/e.c63" "from a directory"
expect_error "adir: Is a directory" "$DEC" "$O/adir" "$O/e.yuv"
absent "$O/e.yuv" "from a directory"
# an old output stays as it was when the run fails
echo old >"$O/old.c63"
echo old >"$O/old.ref"
expect_error "no complete frame" "$ENC" -w 176 -h 144 -o "$O/old.c63" /dev/null
same "$O/old.c63" "$O/old.ref" "a failed c63-enc leaves the old output alone"

# a full device: one clear message
one_message() {
  [ "$(grep -c . "$T/err")" -eq 1 ] || fail "more than one message from $1: $(cat "$T/err")"
}
expect_error "error writing /dev/full: No space left on device" \
  "$ENC" -w 176 -h 144 -o /dev/full "$O/in.yuv"
one_message c63-enc
expect_error "error writing /dev/full: No space left on device" "$DEC" "$O/in.c63" /dev/full
one_message c63-dec
"$DEC" "$O/in.c63" - >/dev/full 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "error writing standard output: No space left on device" "$T/err" &&
  [ "$(grep -c . "$T/err")" -eq 1 ] && echo "ok: c63-dec to a full standard output: $(cat "$T/err")" ||
  fail "c63-dec - >/dev/full ($rc): $(cat "$T/err")"
# a write error half way into a regular file (a file size limit: EFBIG, as a
# full disk gives ENOSPC): the old file is untouched, no temporary is left
for tool in enc dec dec-mapped; do
  echo old >"$O/old.$tool"
  case $tool in
  enc) set -- "$ENC" -w 176 -h 144 -o "$O/old.$tool" "$YUV/pan_176x144.yuv" ;;
  dec) set -- "$DEC" "$s" "$O/old.$tool" ;;
  *) set -- "$DEC" --writers 4 "$s" "$O/old.$tool" ;; # through mappings
  esac
  (trap '' XFSZ && ulimit -f 200 && "$@") 2>"$T/err"
  rc=$?
  if [ $rc -ne 0 ] && grep -q "error writing $O/old.$tool: File too large" "$T/err" &&
    [ "$(grep -c . "$T/err")" -eq 1 ]; then
    echo "ok: c63-$tool: a write error is reported once: $(cat "$T/err")"
  else
    fail "c63-$tool write error ($rc): $(cat "$T/err")"
  fi
  same "$O/old.$tool" "$O/old.ref" "c63-$tool: the old output survives a write error"
  # The file size limit itself (SIGXFSZ not ignored): a message, and the
  # temporary removed, the old file untouched, ended by the signal
  (ulimit -c 0 && ulimit -f 200 && exec env --default-signal=XFSZ "$@") 2>"$T/err"
  rc=$?
  if [ $rc -gt 128 ] && [ "$(kill -l $rc)" = XFSZ ] &&
    grep -q "writing $O/old.$tool: the file size limit (ulimit -f) was reached" "$T/err"; then
    echo "ok: c63-$tool at the file size limit: $(cat "$T/err")"
  else
    fail "c63-$tool at the file size limit ($rc): $(cat "$T/err")"
  fi
  same "$O/old.$tool" "$O/old.ref" "c63-$tool: the old output survives the file size limit"
done
# c63-dec's writers grow the file ahead of the pictures, but never past the
# limit: pictures that fit are written (4 MB under a limit of 10 MB or more)
(ulimit -f 20000 && exec env --default-signal=XFSZ "$DEC" --quiet --writers 4 "$s" "$O/limit.yuv") \
  2>"$T/err" ||
  fail "c63-dec --writers 4 under a file size limit: $(cat "$T/err")"
same "$O/limit.yuv" "$T/dec-ref.yuv" "c63-dec --writers 4 under a file size limit the output fits"
# A full file system under c63-dec, with write() and through mappings
# (--writers 4, tools/mapped_output.c), where a page that cannot be had
# raises SIGBUS: the same one message either way, not a crash. Needs a
# small tmpfs of its own: a mount namespace (root with CAP_SYS_ADMIN).
if unshare -m true 2>/dev/null; then
  for writers in 1 4; do
    unshare -m sh -c '
      mount -t tmpfs -o size=1m tmpfs "$1" || exit 99
      echo old >"$1/full.yuv"
      "$2" --writers "$4" "$3" "$1/full.yuv"
      rc=$?
      [ "$(cat "$1/full.yuv")" = old ] || echo "the old output was changed" >&2
      ls -A "$1" | grep -v "^full.yuv$" | sed "s/^/left behind: /" >&2
      exit $rc' sh "$O" "$DEC" "$s" $writers 2>"$T/err"
    rc=$?
    if [ $rc -eq 99 ]; then
      echo "skip: no tmpfs could be mounted for the full file system check"
    elif [ $rc -eq 1 ] && grep -q "error writing $O/full.yuv: No space left on device" "$T/err" &&
      [ "$(grep -c . "$T/err")" -eq 1 ]; then
      echo "ok: c63-dec --writers $writers on a full file system: $(cat "$T/err")"
    else
      fail "c63-dec --writers $writers on a full file system ($rc): $(cat "$T/err")"
    fi
  done
else
  echo "skip: no mount namespace for the full file system check"
fi
# success replaces the file a symbolic link names, keeping the link, and a
# new file gets the mode fopen would give it
echo old >"$O/target.c63"
ln -s target.c63 "$O/link.c63"
"$ENC" -w 176 -h 144 -o "$O/link.c63" "$YUV/pan_176x144.yuv" 2>"$T/err" || fail "c63-enc -o link: $(cat "$T/err")"
[ -L "$O/link.c63" ] && echo "ok: the output link stays a link" || fail "the output link was replaced"
same "$O/target.c63" "$CONF/pan_176x144.c63" "the link's target gets the stream"
(umask 022 && "$DEC" "$O/in.c63" "$O/new.yuv") 2>"$T/err" || fail "c63-dec: $(cat "$T/err")"
m=$(stat -c %a "$O/new.yuv")
[ "$m" = 644 ] && echo "ok: a new output has mode 644 under umask 022" || fail "new output mode $m"
# an output of no frames (-f 0) is an error that leaves the old output alone
echo old >"$O/f0.c63"
expect_error "-f 0: no frame to encode" "$ENC" -f 0 -w 176 -h 144 -o "$O/f0.c63" \
  "$YUV/pan_176x144.yuv"
[ $rc -eq 1 ] || fail "-f 0: exit status $rc, expected 1"
expect_error "-f 0: no frame to encode" "$ENC" -f 0 -w 176 -h 144 -o "$O/f0.c63" /dev/null
same "$O/f0.c63" "$O/old.ref" "c63-enc -f 0 leaves the old output alone"

# --- closed standard descriptors get /dev/null, so that no file the tool
# opens takes them: a message to standard error never lands in the output ---
"$ENC" --allow-partial -w 176 -h 144 -o "$O/closed.c63" - <"$T/partial.yuv" 2>&-
rc=$?
[ $rc -eq 0 ] && same "$O/closed.c63" "$CONF/pan_176x144.c63" "c63-enc - 2>&-: the reference bytes" ||
  fail "c63-enc --allow-partial - 2>&-: exit status $rc"
"$ENC" -w 176 -h 144 -o "$O/closed.c63" - <"$YUV/pan_176x144.yuv" 1>&- 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && same "$O/closed.c63" "$CONF/pan_176x144.c63" "c63-enc - 1>&-: the reference bytes" ||
  fail "c63-enc - 1>&-: exit status $rc: $(cat "$T/err")"
"$DEC" "$T/junk.c63" "$O/junk-ref.yuv" 2>/dev/null
"$DEC" - "$O/closed.yuv" <"$T/junk.c63" 2>&-
rc=$?
[ $rc -eq 1 ] && same "$O/closed.yuv" "$O/junk-ref.yuv" "c63-dec - 2>&-: the pictures alone" ||
  fail "c63-dec - 2>&- of a stream with junk: exit status $rc, expected 1"
"$DEC" "$T/junk.c63" "$O/closed.yuv" 0<&- 1>&- 2>&-
rc=$?
[ $rc -eq 1 ] && same "$O/closed.yuv" "$O/junk-ref.yuv" "c63-dec 0<&- 1>&- 2>&-: the pictures alone" ||
  fail "c63-dec 0<&- 1>&- 2>&- of a stream with junk: exit status $rc, expected 1"

# --- a signal that ends a run removes its temporary; the old output stays ---
# The input is a FIFO the test keeps open, so the tool is blocked mid-run,
# its temporary there (c63-dec's writers grow it ahead), when the signal
# comes. A command run in the background ignores SIGINT in a shell without
# job control, and the test may run with others ignored (nohup): the tools
# keep what they inherit ignored, so env restores every default.
mkfifo "$T/fifo"
temp_of_sig_out() {
  ls -A "$O" | grep '^\.sig\.out\.'
}
for tool in enc dec dec-mapped; do
  for sig in INT TERM HUP PIPE XFSZ; do
    echo old >"$O/sig.out"
    case $tool in
    enc) set -- "$ENC" -w 176 -h 144 -o "$O/sig.out" "$T/fifo" ;;
    dec) set -- "$DEC" "$T/fifo" "$O/sig.out" ;;
    *) set -- "$DEC" --writers 4 "$T/fifo" "$O/sig.out" ;;
    esac
    # read and write: the open does not wait for a reader; 64 KiB fit the
    # pipe, so the write never waits either
    exec 3<>"$T/fifo"
    (ulimit -c 0 && exec env --default-signal "$@") 2>"$T/err" &
    pid=$!
    if [ $tool = enc ]; then head -c 65536 "$YUV/pan_176x144.yuv"; else head -c 65536 "$s"; fi >&3
    n=0
    while [ -z "$(temp_of_sig_out)" ] && kill -0 $pid 2>/dev/null && [ $n -lt 1200 ]; do
      sleep 0.1
      n=$((n + 1))
    done
    kill -s $sig $pid
    wait $pid
    rc=$?
    exec 3>&-
    what="c63-$tool ended by SIG$sig"
    if [ $rc -gt 128 ] && [ "$(kill -l $rc)" = $sig ] && [ -z "$(temp_of_sig_out)" ] &&
      { [ $sig != XFSZ ] || grep -q "sig.out: the file size limit (ulimit -f) was reached" "$T/err"; }; then
      echo "ok: $what: no temporary left"
    else
      fail "$what ($rc): $(temp_of_sig_out) $(cat "$T/err")"
    fi
    same "$O/sig.out" "$O/old.ref" "$what: the old output stays"
  done
done
# a replaced file keeps its mode (0600 stays private, whatever the umask
# gives new files), and as root its owner and group too
echo old >"$O/private.yuv"
chmod 600 "$O/private.yuv"
(umask 022 && "$DEC" "$s" "$O/private.yuv") 2>"$T/err" || fail "c63-dec over a 0600 file: $(cat "$T/err")"
m=$(stat -c %a "$O/private.yuv")
[ "$m" = 600 ] && echo "ok: a replaced output keeps mode 600" || fail "a 0600 output became $m"
same "$O/private.yuv" "$T/dec-ref.yuv" "the 0600 output is replaced"
# root replaces file $1 of owner:group $2, mode 640 ($3 names the file)
root_replaces() {
  echo old >"$O/$1"
  chown "$2" "$O/$1"
  chmod 640 "$O/$1"
  "$DEC" "$s" "$O/$1" 2>"$T/err" || fail "c63-dec over $3: $(cat "$T/err")"
  o=$(stat -c '%u:%g %a' "$O/$1")
  [ "$o" = "$2 640" ] && echo "ok: root replacing $3 keeps $o" ||
    fail "root replacing a $2 640 output made it $o"
}
if [ "$(id -u)" -eq 0 ]; then
  root_replaces theirs.yuv 65534:65534 "another user's output"
  # its own file in another group: the group is kept although the owner
  # needs no change
  root_replaces ours.yuv 0:65534 "its own output in group 65534"
fi

# Outputs the user may not write are refused, as a shell redirect refuses
# them, and an unwritable directory is named. Root may write anything: as
# root, these run without the capabilities that override file permissions
# (where they can be dropped), else as user 65534 (nobody).
U=$T/user
mkdir "$U"
no_override="--bounding-set=-dac_override,-dac_read_search"
if [ "$(id -u)" -ne 0 ]; then
  as_user() { "$@"; }
elif setpriv $no_override true 2>/dev/null; then
  as_user() { setpriv $no_override "$@"; }
elif setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  chmod 711 "$T"
  chown 65534:65534 "$U"
else
  U=
fi
if [ -n "$U" ] && as_user "$DEC" --version >/dev/null 2>&1; then
  as_user sh -c 'echo old >"$1" && chmod 444 "$1" && mkdir "$2" && echo old >"$2/w.yuv" &&
    chmod 555 "$2"' sh "$U/ro.yuv" "$U/rodir"
  expect_error "cannot open $U/ro.yuv: Permission denied" as_user "$DEC" "$s" "$U/ro.yuv"
  [ $rc -eq 1 ] || fail "a read-only output: exit status $rc, expected 1"
  expect_error "cannot open $U/ro.yuv: Permission denied" as_user "$ENC" -w 176 -h 144 \
    -o "$U/ro.yuv" "$YUV/pan_176x144.yuv"
  same "$U/ro.yuv" "$O/old.ref" "a read-only output stays as it was"
  expect_error "cannot create $U/rodir/x.yuv: directory $U/rodir is not writable: Permission denied" \
    as_user "$DEC" "$s" "$U/rodir/x.yuv"
  expect_error "cannot replace $U/rodir/w.yuv: directory $U/rodir is not writable" \
    as_user "$DEC" "$s" "$U/rodir/w.yuv"
  same "$U/rodir/w.yuv" "$O/old.ref" "a file in a read-only directory stays as it was"
  left=$(ls -A "$U" "$U/rodir" | grep '^\.') && fail "temporary files left behind: $left" ||
    echo "ok: no temporary files left by the refused outputs"
else
  echo "skip: no other user to run the read-only output checks as"
fi

# names up to the 255-byte limit: the temporary's name, longer, is cut to fit
for n in 248 255; do
  name=$(printf "%0${n}d" 0)
  "$DEC" --quiet "$s" "$O/$name" 2>"$T/err" || fail "c63-dec to a $n-byte name: $(cat "$T/err")"
  same "$O/$name" "$T/dec-ref.yuv" "c63-dec writes an output with a $n-byte name"
  rm -f "$O/$name"
done
expect_error "File name too long" "$DEC" "$s" "$O/$(printf "%0256d" 0)"
# every failed run above removed its temporary file
left=$(ls -A "$O" | grep '^\.') && fail "temporary files left behind: $left" ||
  echo "ok: no temporary files left behind"
"$ENC" --help | grep -q "Usage" && echo "ok: c63-enc --help" || fail "c63-enc --help"
"$ENC" --help | grep -q -e "--mode exact|rd" && echo "ok: c63-enc --help lists --mode" ||
  fail "c63-enc --help does not list --mode"
"$DEC" --help | grep -q "Usage" && echo "ok: c63-dec --help" || fail "c63-dec --help"

# --version on every tool; --quiet leaves a clean run silent.
for tool in "$ENC" "$DEC" "$PSNR"; do
  v=$("$tool" --version) && echo "$v" | grep -q "(gst-c63) [0-9]" &&
    echo "ok: $v" || fail "$tool --version: $v"
done
"$DEC" --quiet "$CONF/pan_176x144.c63" "$T/quiet.yuv" > "$T/quiet.out" 2>&1 &&
  [ ! -s "$T/quiet.out" ] && echo "ok: c63-dec --quiet prints nothing" ||
  fail "c63-dec --quiet printed: $(cat "$T/quiet.out")"

# --- c63-enc's reader pool and writer thread: the bytes of one reader ---
s=pan_352x288_q10k7.c63
in=$(field "$s" 2) w=$(field "$s" 3) h=$(field "$s" 4)
q=$(field "$s" 6) k=$(field "$s" 7) r=$(field "$s" 8)
in=$YUV/${in%.xz}
for threads in "--readers 1 --writers 0" "--readers 16 --writers 1" "--readers 3 --writers 4"; do
  # shellcheck disable=SC2086 # two options and their values
  if "$ENC" -w "$w" -h "$h" -q "$q" -k "$k" -r "$r" $threads -o "$T/pool.c63" "$in" 2>"$T/err"; then
    same "$T/pool.c63" "$CONF/$s" "c63-enc $threads reproduces $s"
  else
    fail "c63-enc $threads: $(cat "$T/err")"
  fi
done
"$ENC" -w "$w" -h "$h" -f 5 --readers 1 --writers 0 -o "$T/f5-1.c63" "$in" 2>/dev/null &&
  "$ENC" -w "$w" -h "$h" -f 5 --readers 16 --writers 3 -o "$T/f5-16.c63" "$in" 2>/dev/null &&
  same "$T/f5-16.c63" "$T/f5-1.c63" "c63-enc -f 5: 16 readers, 3 writers write one reader's bytes" ||
  fail "c63-enc -f 5 --readers 1|16 failed"
# short and odd inputs are refused whatever the readers
head -c 1000 "$YUV/pan_176x144.yuv" >"$T/short.yuv"
: >"$T/empty.yuv"
for n in 1 8; do
  expect_error "partial frame.*--allow-partial" "$ENC" --readers $n -w 176 -h 144 \
    -o "$T/partial-$n.c63" "$T/partial.yuv"
  expect_error "partial frame (1000 of 38016 bytes)" "$ENC" --readers $n -w 176 -h 144 \
    -o "$T/short.c63" "$T/short.yuv"
  expect_error "no complete frame" "$ENC" --readers $n -w 176 -h 144 -o "$T/empty.c63" "$T/empty.yuv"
  absent "$T/partial-$n.c63" "after a partial frame with --readers $n"
done
"$ENC" --allow-partial --readers 8 -w 176 -h 144 -o "$T/partial.c63" "$T/partial.yuv" 2>/dev/null &&
  same "$T/partial.c63" "$CONF/pan_176x144.c63" "--allow-partial --readers 8" ||
  fail "c63-enc --allow-partial --readers 8 failed"
for bad in "--readers 0" "--readers 17" "--readers x" "--writers 9" "--writers -1"; do
  # shellcheck disable=SC2086
  expect_usage "is not a thread count" "$ENC" $bad -w 176 -h 144 -o "$T/x.c63" \
    "$YUV/pan_176x144.yuv"
done

# --- the status line: on a terminal only, with the total when known ---
# run CMD... on a pseudo-terminal (script, of util-linux's bsdutils,
# essential in Debian); what the terminal showed goes to $T/tty
on_tty() {
  cmd=""
  for a in "$@"; do
    cmd="$cmd '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'"
  done
  script -qec "$cmd" /dev/null >"$T/tty" 2>&1 </dev/null
}
# the lines the terminal ($T/tty) showed, each overwrite of one a line of
# its own, without the erasing of a line's end
tty_lines() {
  tr '\r' '\n' <"$T/tty" | sed "s/$(printf '\033')\\[K//g"
}
# the terminal must show a status line matching $1 ($2 says which)
status_line() {
  if tty_lines | grep -q -e "$1"; then
    echo "ok: $2"
  else
    fail "$2: no '$1' on the terminal:"
    cat -v "$T/tty"
  fi
}
# $1 (a file of standard error) must hold no status line ($2 says when)
no_status_line() {
  if grep -q -e "$(printf '\r')" -e "$(printf '\033')" -e "frames (.*%)" -e "fps, .* kbit/s" "$1"; then
    fail "a status line $2:"
    cat -v "$1"
  else
    echo "ok: no status line $2"
  fi
}
tty_line="frames (100%), [0-9.]* fps, [0-9.]* kbit/s"
if on_tty "$ENC" -w 176 -h 144 -o "$T/tty.c63" "$YUV/pan_176x144.yuv"; then
  status_line "^c63-enc: 110/110 $tty_line" "c63-enc on a terminal: a status line of 110 frames"
  same "$T/tty.c63" "$CONF/pan_176x144.c63" "c63-enc on a terminal: the same stream"
  grep -q "encoded 110 frames" "$T/tty" || fail "c63-enc on a terminal: no summary"
else
  fail "c63-enc on a terminal: $(cat -v "$T/tty")"
fi
on_tty "$ENC" -w 176 -h 144 -f 7 -o "$T/tty.c63" "$YUV/pan_176x144.yuv" &&
  status_line "^c63-enc: 7/7 $tty_line" "c63-enc -f 7: a total of 7 frames" ||
  fail "c63-enc -f 7 on a terminal failed"
on_tty sh -c 'cat "$1" | "$2" -w 176 -h 144 -o "$3" -' sh "$YUV/pan_176x144.yuv" "$ENC" \
  "$T/tty.c63" &&
  status_line "^c63-enc: 110 frames, [0-9.]* fps, [0-9.]* kbit/s" \
    "c63-enc from a pipe: frames without a total" || fail "c63-enc from a pipe on a terminal failed"
on_tty "$ENC" --quiet -w 176 -h 144 -o "$T/tty.c63" "$YUV/pan_176x144.yuv" && [ ! -s "$T/tty" ] &&
  echo "ok: c63-enc --quiet on a terminal prints nothing" ||
  fail "c63-enc --quiet on a terminal: $(cat -v "$T/tty")"
# standard error a file or a pipe (standard output still the terminal)
on_tty sh -c '"$1" -w 176 -h 144 -o "$2" "$3" 2>"$4"' sh "$ENC" "$T/tty.c63" \
  "$YUV/pan_176x144.yuv" "$T/err-file"
no_status_line "$T/err-file" "when c63-enc's standard error is a file"
grep -q "encoded 110 frames" "$T/err-file" || fail "c63-enc 2>file: no summary"
on_tty sh -c '"$1" -w 176 -h 144 -o "$2" "$3" 2>&1 | cat >"$4"' sh "$ENC" "$T/tty.c63" \
  "$YUV/pan_176x144.yuv" "$T/err-pipe"
no_status_line "$T/err-pipe" "when c63-enc's standard error is a pipe"

if on_tty "$DEC" "$CONF/pan_176x144.c63" "$T/tty.yuv"; then
  status_line "^c63-dec: 110/110 $tty_line" "c63-dec on a terminal: a status line of 110 frames"
  grep -q "decoded 110 frames" "$T/tty" || fail "c63-dec on a terminal: no summary"
else
  fail "c63-dec on a terminal: $(cat -v "$T/tty")"
fi
on_tty sh -c 'cat "$1" | "$2" - "$3"' sh "$CONF/pan_176x144.c63" "$DEC" "$T/tty.yuv" &&
  status_line "^c63-dec: 110 frames, [0-9.]* fps, [0-9.]* kbit/s" \
    "c63-dec from a pipe: frames without a total" || fail "c63-dec from a pipe on a terminal failed"
for quiet in -q --quiet; do
  on_tty "$DEC" $quiet "$CONF/pan_176x144.c63" "$T/tty.yuv" && [ ! -s "$T/tty" ] &&
    echo "ok: c63-dec $quiet on a terminal prints nothing" ||
    fail "c63-dec $quiet on a terminal: $(cat -v "$T/tty")"
done
# a corrupt frame's message on a line of its own, not after the status line
# (drawn for the first frame already)
size=$(wc -c <"$CONF/pan_176x144.c63")
{ head -c $((size / 2)) "$CONF/pan_176x144.c63"; head -c 64 /dev/zero | tr '\0' '\377'
  tail -c +$((size / 2 + 65)) "$CONF/pan_176x144.c63"; } >"$T/mid.c63"
on_tty "$DEC" "$T/mid.c63" "$T/tty.yuv"
if tty_lines | grep -q "^c63-dec: frame [0-9]* at offset"; then
  echo "ok: c63-dec on a terminal: messages start their own line"
else
  fail "c63-dec on a terminal: a message shares the status line: $(cat -v "$T/tty")"
fi
on_tty sh -c '"$1" "$2" "$3" 2>"$4"' sh "$DEC" "$CONF/pan_176x144.c63" "$T/tty.yuv" "$T/err-file"
no_status_line "$T/err-file" "when c63-dec's standard error is a file"

if [ $fails -ne 0 ]; then
  echo "$fails CLI checks failed"
  exit 1
fi
echo "all CLI checks passed"
