//! The engine's layers point one way (ARCHITECTURE.md, "Layers"): a module of `crates/oxmq/src`
//! may name only the modules below it in [`ORDER`]. This test reads the sources and fails on
//! any `crate::` or `super::` path (in `use` or inline) from a module to one above it. Test
//! code (`#[cfg(test)]` modules, `tests.rs` files, `testing.rs`) may reach up: it drives the
//! layer it tests through the public API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The top-level modules of `crates/oxmq/src`, lowest first.
const ORDER: &[&str] = &[
    "error",
    "opt",
    "properties",
    "chunk",
    "arena",
    "msg",
    "pipe",
    "mailbox",
    "transport",
    "io",
    "security",
    "socket",
    "metrics",
    "context",
    "monitor",
    "poll",
    "proxy",
    "auth",
    "asynch",
];

/// Modules that exist only for tests.
const TEST_ONLY: &[&str] = &["testing", "smoke_tests", "tests"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a source file, relative to the crate root (`io/session/mod.rs` is
/// `["io", "session"]`, `lib.rs` is `[]`).
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("under src");
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The source without comments, string literals, and `#[cfg(test)]` items (a module's braces
/// or a declaration of a test module in its own file, which the caller skips then).
fn strip(text: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut test_files = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if text[i..].starts_with("/*") {
            i = text[i..].find("*/").map_or(b.len(), |j| i + j + 2);
            continue;
        }
        if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if text[i..].starts_with("#[cfg(test)]") {
            let rest = &text[i + "#[cfg(test)]".len()..];
            let item = rest.trim_start();
            let skipped = rest.len() - item.len() + "#[cfg(test)]".len();
            if let Some(decl) = item.strip_prefix("mod ").or_else(|| item.strip_prefix("pub(crate) mod ")) {
                let name: String = decl.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                let after = decl[name.len()..].trim_start();
                if after.starts_with(';') {
                    test_files.push(name);
                    i += skipped;
                    continue;
                }
            }
            // Skip the item: up to its matching closing brace (or its semicolon).
            let mut j = i + skipped;
            let mut depth = 0i32;
            while j < b.len() {
                match b[j] {
                    // String and character literals may hold braces.
                    b'"' => {
                        j += 1;
                        while j < b.len() && b[j] != b'"' {
                            j += if b[j] == b'\\' { 2 } else { 1 };
                        }
                    }
                    b'\'' if b.get(j + 2) == Some(&b'\'') => j += 2,
                    b'\'' if b.get(j + 1) == Some(&b'\\') && b.get(j + 3) == Some(&b'\'') => j += 3,
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            j += 1;
                            break;
                        }
                    }
                    b';' if depth == 0 => {
                        j += 1;
                        break;
                    }
                    _ => {}
                }
                j += 1;
            }
            i = j;
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    (out, test_files)
}

/// The crate root's re-exports (`pub use socket::Socket;`): name → module.
fn root_names() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let mut m = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else { continue };
        let Some((module, names)) = rest.trim_end_matches(';').split_once("::") else { continue };
        let names = names.trim_matches(|c| c == '{' || c == '}');
        for n in names.split(',') {
            let n = n.split("::").last().unwrap_or("").trim();
            if !n.is_empty() {
                m.insert(n.to_string(), module.to_string());
            }
        }
    }
    m
}

/// The top-level modules a stripped source names, given its own module path.
fn references(code: &str, me: &[String], roots: &BTreeMap<String, String>) -> Vec<String> {
    let mut found = Vec::new();
    let resolve = |first: &str, found: &mut Vec<String>| {
        let first = first.trim();
        let name: String = first.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() || name == "self" {
            return;
        }
        found.push(roots.get(&name).cloned().unwrap_or(name));
    };
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(j) = code[i..].find("crate::") {
        let at = i + j;
        let prev = if at == 0 { b' ' } else { bytes[at - 1] };
        i = at + "crate::".len();
        if prev.is_ascii_alphanumeric() || prev == b'_' || prev == b'$' {
            continue;
        }
        let rest = &code[i..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                resolve(item.split("::").next().unwrap_or(""), &mut found);
            }
        } else {
            resolve(rest, &mut found);
        }
    }
    // `super::` chains, resolved against this file's module path.
    let mut i = 0;
    while let Some(j) = code[i..].find("super::") {
        let at = i + j;
        let prev = if at == 0 { b' ' } else { bytes[at - 1] };
        i = at + "super::".len();
        if prev == b':' || prev.is_ascii_alphanumeric() {
            continue; // counted with the chain's first `super::`
        }
        let mut depth = 1;
        let mut rest = &code[i..];
        while let Some(r) = rest.strip_prefix("super::") {
            depth += 1;
            rest = r;
        }
        if depth < me.len() {
            continue; // still inside this top-level module
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                resolve(item.split("::").next().unwrap_or(""), &mut found);
            }
        } else {
            resolve(rest, &mut found);
        }
    }
    found
}

#[test]
fn lower_modules_never_name_higher_ones() {
    let roots = root_names();
    let rank = |m: &str| ORDER.iter().position(|x| *x == m);
    let mut all = Vec::new();
    files(&src(), &mut all);
    all.sort();
    let mut test_files: Vec<PathBuf> = Vec::new();
    let mut sources = Vec::new();
    for f in &all {
        let text = std::fs::read_to_string(f).expect("read");
        let (code, tests) = strip(&text);
        let dir = if f.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs") {
            f.parent().expect("dir").to_path_buf()
        } else {
            f.with_extension("")
        };
        for t in tests {
            test_files.push(dir.join(format!("{t}.rs")));
            test_files.push(dir.join(t).join("mod.rs"));
        }
        sources.push((f.clone(), code));
    }
    let mut violations = Vec::new();
    let mut checked = 0;
    for (f, code) in &sources {
        if test_files.contains(f) {
            continue;
        }
        let me = module_path(f);
        let Some(top) = me.first() else { continue }; // lib.rs
        if TEST_ONLY.contains(&top.as_str()) {
            continue;
        }
        let my_rank = rank(top).unwrap_or_else(|| panic!("{}: module `{top}` is not in ORDER", f.display()));
        checked += 1;
        for r in references(code, &me, &roots) {
            if r == *top {
                continue;
            }
            match rank(&r) {
                Some(other) if other > my_rank => violations
                    .push(format!("{}: `{top}` names `{r}`, which is above it", f.strip_prefix(src()).unwrap().display())),
                Some(_) => {}
                None if TEST_ONLY.contains(&r.as_str()) => {
                    violations.push(format!("{}: `{top}` names the test-only `{r}` outside tests", f.display()))
                }
                None => {} // an item of the crate root (a macro, a type alias), or an external crate's
            }
        }
    }
    assert!(checked > 50, "the sources were not found ({checked} files checked)");
    violations.sort();
    violations.dedup();
    assert!(violations.is_empty(), "upward imports:\n{}", violations.join("\n"));
}

#[test]
fn the_checker_sees_upward_and_test_code() {
    let roots = root_names();
    let me = vec!["pipe".to_string()];
    let (code, _) = strip("use crate::socket::SocketType;\n// crate::context in a comment\nfn f() { crate::io::x(); }");
    assert_eq!(references(&code, &me, &roots), ["socket", "io"]);
    let (code, tests) = strip("#[cfg(test)]\nmod tests {\n let c = '}'; let s = \"}\"; use crate::Context;\n}\n#[cfg(test)]\nmod other;\nuse crate::{msg::Msg, Socket};");
    assert_eq!(tests, ["other"]);
    assert_eq!(references(&code, &me, &roots), ["msg", "socket"]);
    let deep = vec!["io".to_string(), "session".to_string(), "read".to_string()];
    let (code, _) = strip("use super::super::config::X;\nuse super::super::super::socket::Y;");
    assert_eq!(references(&code, &deep, &roots), ["socket"]);
}
