//! How a server gives up before serving: one line on stderr, exit code 2 (as for bad flags).

pub fn fail(message: String) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2)
}
