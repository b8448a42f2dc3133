// SPDX-License-Identifier: MIT
// A Rust program on the io-uring crate (tokio-rs/io-uring): reads a file
// back through io_uring, posts a NOP and a timeout, and does the same on
// an SQPOLL ring.  Exit 0 only if every CQE is as the kernel would post.
use io_uring::{opcode, types, IoUring};
use std::fs::File;
use std::io::Write;
use std::os::unix::io::AsRawFd;

fn check(ring: &mut IoUring, label: &str) -> Result<(), String> {
    let path = std::env::temp_dir().join(format!("uuring-rs-{}-{}", std::process::id(), label));
    let data: Vec<u8> = (0..65536u32).map(|i| (i * 7 + 3) as u8).collect();
    File::create(&path).and_then(|mut f| f.write_all(&data)).map_err(|e| e.to_string())?;
    let file = File::open(&path).map_err(|e| e.to_string())?;
    std::fs::remove_file(&path).ok();
    let mut buf = vec![0u8; data.len()];
    let read = opcode::Read::new(types::Fd(file.as_raw_fd()), buf.as_mut_ptr(), buf.len() as u32)
        .offset(0)
        .build()
        .user_data(1);
    let nop = opcode::Nop::new().build().user_data(2);
    let ts = types::Timespec::new().nsec(10_000_000);
    let timeout = opcode::Timeout::new(&ts).build().user_data(3);
    unsafe {
        let mut sq = ring.submission();
        sq.push(&read).map_err(|e| e.to_string())?;
        sq.push(&nop).map_err(|e| e.to_string())?;
        sq.push(&timeout).map_err(|e| e.to_string())?;
    }
    ring.submit_and_wait(3).map_err(|e| format!("{}: submit_and_wait: {}", label, e))?;
    let mut seen = [false; 3];
    for cqe in ring.completion() {
        let ud = cqe.user_data();
        let want = match ud {
            1 => data.len() as i32,
            2 => 0,
            3 => -libc::ETIME,
            _ => return Err(format!("{}: unexpected user_data {}", label, ud)),
        };
        if cqe.result() != want {
            return Err(format!("{}: user_data {} res {} (want {})", label, ud, cqe.result(), want));
        }
        seen[(ud - 1) as usize] = true;
    }
    if seen.iter().any(|s| !s) {
        return Err(format!("{}: missing CQEs {:?}", label, seen));
    }
    if buf != data {
        return Err(format!("{}: data read back differs", label));
    }
    Ok(())
}

fn main() {
    let run = || -> Result<(), String> {
        let mut ring = IoUring::new(8).map_err(|e| format!("IoUring::new: {}", e))?;
        check(&mut ring, "default")?;
        let mut sq = IoUring::builder()
            .setup_sqpoll(500)
            .build(8)
            .map_err(|e| format!("SQPOLL setup: {}", e))?;
        check(&mut sq, "sqpoll")?;
        Ok(())
    };
    match run() {
        Ok(()) => println!("rust io-uring: ok"),
        Err(e) => {
            eprintln!("rust io-uring: {}", e);
            std::process::exit(1);
        }
    }
}
