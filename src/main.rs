fn main() -> std::process::ExitCode {
    gpudoctor::cli::main()
}
