//! Gives the shared library libzmq's soname, so a program linked against Debian's
//! libzmq (`NEEDED libzmq.so.5`) loads oxmq's when it is found first on the library path.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libzmq.so.5");
    println!("cargo:rerun-if-changed=build.rs");
}
