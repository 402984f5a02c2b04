//! The CLI commands as processes, where their input and output misbehave: a reader that
//! closes the pipe early, a full disk, standard input for every command, input past
//! what 32-bit offsets address, locations nested 20,000 deep, meshes whose device count
//! does not fit an `i64`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

const MISTAKES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mistakes.mlir");
const MLP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mlp.mlir");

fn sdy_lsp(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sdy-lsp"));
    c.args(args);
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `cmd` with `stdin` on standard input.
fn with_stdin(mut cmd: Command, stdin: &[u8]) -> Output {
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// Output into a pipe whose reader is gone (`| head -1` once it has its line): the
/// command stops quietly with the status it has anyway (`check`: 1, errors found).
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let cases: &[(&[&str], i32)] = &[
        (&["check", MISTAKES], 1),
        (&["check", "--format", "json", MISTAKES], 1),
        (&["opt", MLP], 0),
        (&["explain", &format!("{MLP}:6:60")], 0),
        (&["--help"], 0),
    ];
    for (args, status) in cases {
        let mut child =
            sdy_lsp(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take()); // the reader is gone before anything is written
        let out = child.wait_with_output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(*status), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("cannot write"),
            "{args:?}: {stderr}"
        );
    }
}

/// Output into a full disk: a message and status 2, never success with the output lost.
#[test]
fn a_full_disk_is_reported() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let deep = format!("{MLP}:6:60");
    let cases: &[&[&str]] = &[
        &["check", MISTAKES],
        &["check", "--format=json", MISTAKES],
        &["opt", MLP],
        &["explain", &deep],
        &["explain", "--markdown", &deep],
        &["--help"],
        &["--version"],
    ];
    for args in cases {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = sdy_lsp(args).stdout(full).stderr(Stdio::piped()).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("sdy-lsp: cannot write the output: No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// `-` is standard input for all three commands, and gives what the file gives.
#[test]
fn every_command_reads_standard_input() {
    let mlp = std::fs::read(MLP).unwrap();
    for (file_args, stdin_args) in [
        (vec!["check", MISTAKES], vec!["check", "-"]),
        (vec!["opt", MLP], vec!["opt", "-"]),
        (vec!["explain", &format!("{MLP}:6:60")], vec!["explain", "-:6:60"]),
        (
            vec!["explain", "--markdown", &format!("{MLP}:6:60")],
            vec!["explain", "--markdown", "-:6:60"],
        ),
    ] {
        let input =
            if file_args[0] == "check" { std::fs::read(MISTAKES).unwrap() } else { mlp.clone() };
        let from_file = sdy_lsp(&file_args).output().unwrap();
        let from_stdin = with_stdin(sdy_lsp(&stdin_args), &input);
        assert_eq!(
            from_stdin.status.code(),
            from_file.status.code(),
            "{stdin_args:?}: {}",
            text(&from_stdin.stderr)
        );
        let expected = text(&from_file.stdout).replace(MISTAKES, "-");
        assert!(!expected.is_empty());
        assert_eq!(text(&from_stdin.stdout), expected, "{stdin_args:?}");
    }
}

/// Input past 4 GiB - 1 bytes is refused with a message, not cut short (a sparse
/// file: nothing of it is written or read). Standard input that is such a file too.
#[test]
fn input_past_what_offsets_address_is_refused() {
    let dir = std::env::temp_dir().join(format!("sdy-lsp-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.mlir");
    let f = std::fs::File::create(&big).unwrap();
    if f.set_len((1 << 32) + 64 * 1024 * 1024).is_err() {
        return; // no sparse files here
    }
    drop(f);
    let path = big.to_str().unwrap();
    for args in [vec!["check", path], vec!["opt", path], vec!["explain", &format!("{path}:1:1")]] {
        let out = sdy_lsp(&args).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(
                "the input is 4362076160 bytes; at most 4294967295 (4 GiB - 1) are supported"
            ),
            "{stderr}"
        );
    }
    let stdin = std::fs::File::open(&big).unwrap();
    let out = sdy_lsp(&["check", "-"]).stdin(stdin).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("at most 4294967295"), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An op whose location is nested 20,000 deep (name, call site, fused) and which has
/// an error: `opt` reports it (at the op: the location is beyond what it reads) instead
/// of overflowing its stack; `check` too.
#[test]
fn deeply_nested_locations() {
    let n = 20_000;
    let file = "\"f.py\":1:2";
    for loc in [
        format!("{}{file}{}", "\"a\"(".repeat(n), ")".repeat(n)),
        format!("{}{file}{}", "callsite(".repeat(n), " at unknown)".repeat(n)),
        format!("{}{file}{}", "fused[".repeat(n), "]".repeat(n)),
    ] {
        let src = format!(
            "func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {{\n  %0 = stablehlo.add %a, %a {{sdy.sharding = #sdy.sharding_per_value<[<@nomesh, [{{}}]>]>}} : tensor<8xf32> loc({loc})\n  return %0 : tensor<8xf32>\n}}\n"
        );
        for cmd in ["opt", "check"] {
            let out = with_stdin(sdy_lsp(&[cmd, "-"]), src.as_bytes());
            let stderr = text(&out.stderr);
            let all = format!("{stderr}{}", text(&out.stdout));
            assert_eq!(out.status.code(), Some(1), "{cmd}: {}", &stderr[..stderr.len().min(500)]);
            assert!(
                all.contains(":2:8: error: 'stablehlo.add' op result - unknown mesh: @nomesh"),
                "{cmd}: {}",
                &all[..all.len().min(500)]
            );
        }
    }
}

/// Device counts past `i64` read `?` in `check`'s remarks, as in the hover.
#[test]
fn huge_device_counts_are_not_wrapped() {
    let src = "sdy.mesh @a = <[\"x\"=2]>\nsdy.mesh @huge = <[\"x\"=4294967296, \"y\"=4294967296]>\nfunc.func @f(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@huge, [{\"x\", \"y\"}]>}) -> tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\nfunc.func @g(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@a, [{\"x\"}]>}) -> tensor<8xf32> {\n  return %arg0 : tensor<8xf32>\n}\n";
    let out = with_stdin(sdy_lsp(&["check", "-"]), src.as_bytes());
    let stdout = text(&out.stdout);
    expect_test::expect![[r#"
        -:2:10: remark: mesh @huge has ? devices but mesh @a has 2; meshes of one module are expected to have the same number of devices
        -:3:73: remark: dimension 0 of size 8 is not divisible by its ? shards: it will be padded to ? (? padding elements)
    "#]]
    .assert_eq(&stdout);
}
