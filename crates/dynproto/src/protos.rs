//! `.proto` files compiled at run time with protox (pure Rust, no protoc).

use miette::Diagnostic;
use prost_reflect::DescriptorPool;
use std::path::{Path, PathBuf};

/// Compiles `files` and everything they import. Imports are looked up in
/// `import_paths`; when none are given, in the current directory and then in
/// each file's own directory (so `x.proto` anywhere works alone). The
/// well-known `google/protobuf/*.proto` always resolve (protox carries them).
pub fn load_protos(files: &[PathBuf], import_paths: &[PathBuf]) -> Result<DescriptorPool, String> {
    if files.is_empty() {
        return Err("no .proto file given".to_string());
    }
    for dir in import_paths {
        if !dir.is_dir() {
            return Err(format!("import path {} is not a directory", dir.display()));
        }
    }
    let includes = match import_paths.is_empty() {
        true => default_includes(files),
        false => import_paths.to_vec(),
    };
    for file in files {
        // protox would say "not in any include path" for a file that does not exist at all.
        if !file.is_file() && !includes.iter().any(|dir| dir.join(file).is_file()) {
            return Err(format!("proto file {} not found (import paths: {})", file.display(), show(&includes)));
        }
    }
    // A parser bug must not take the CLI down with it: .proto files are user input.
    let compiled = std::panic::catch_unwind(|| {
        let mut compiler = protox::Compiler::new(&includes)?;
        compiler.include_imports(true);
        compiler.open_files(files)?;
        Ok::<_, protox::Error>(compiler.descriptor_pool())
    });
    match compiled {
        Ok(Ok(pool)) => Ok(pool),
        Ok(Err(e)) => Err(describe(&e, &includes)),
        Err(_) => Err(format!("cannot compile {} (the protox compiler failed)", show(files))),
    }
}

fn default_includes(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut includes = vec![PathBuf::from(".")];
    for file in files {
        let dir = match file.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => continue,
        };
        if !includes.contains(&dir) {
            includes.push(dir);
        }
    }
    includes
}

/// One line: `file:line:column: message` when protox knows where, with a
/// hint for the error people hit most (a file outside every import path).
fn describe(err: &protox::Error, includes: &[PathBuf]) -> String {
    let message = err.to_string();
    let place = location(err).or_else(|| err.file().map(str::to_string));
    let mut line = match place {
        Some(place) if !message.contains(&place) => format!("{place}: {message}"),
        _ => message,
    };
    if line.contains("is not in any include path") {
        line.push_str(&format!(" (import paths: {})", show(includes)));
    }
    crate::pool::one_line(&line)
}

/// `name:line:column` of the first labelled span, if the error has source code.
fn location(err: &protox::Error) -> Option<String> {
    let label = err.labels()?.next()?;
    let source = err.source_code()?;
    let span = source.read_span(label.inner(), 0, 0).ok()?;
    let name = span.name().map(str::to_string).or_else(|| err.file().map(str::to_string))?;
    Some(format!("{name}:{}:{}", span.line() + 1, span.column() + 1))
}

fn show(dirs: &[PathBuf]) -> String {
    dirs.iter().map(|d| Path::display(d).to_string()).collect::<Vec<_>>().join(", ")
}
