// SPDX-License-Identifier: MIT
//
// Node.js (libuv) doing real file-system and TCP work, every result
// checked; run by tests/test_run_node under a Docker-like EPERM filter
// (libuv falls back to its thread pool) and under `uuring run
// --block-kernel-uring` (libuv's io_uring rings served by uuring).  With
// UV_USE_IO_URING=1, libuv >= 1.45 sends these async fs requests to its
// SQPOLL ring (open, close, read, write, fsync, fdatasync, statx, rename,
// unlink, mkdir, link, symlink) and batches its epoll_ctl calls through a
// second ring (IORING_OP_EPOLL_CTL).  Exit status 0 only if every check
// passed; one line of JSON on stdout says what ran.
'use strict';
const fs = require('fs');
const fsp = fs.promises;
const net = require('net');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const assert = require('assert');

let checks = 0;
function check(cond, what) {
	assert.ok(cond, what);
	checks++;
}

async function fsWork(dir) {
	const data = crypto.randomBytes(1 << 20);
	const a = path.join(dir, 'a.dat');
	const b = path.join(dir, 'b.dat');

	// write, fsync, fdatasync through a FileHandle; read back
	let fh = await fsp.open(a, 'w', 0o644);
	let off = 0;
	while (off < data.length) {
		const { bytesWritten } = await fh.write(data, off,
			Math.min(65536, data.length - off), off);
		check(bytesWritten > 0, 'write progressed');
		off += bytesWritten;
	}
	await fh.sync();
	await fh.datasync();
	const st1 = await fh.stat();
	check(st1.size === data.length, `fstat size ${st1.size}`);
	await fh.close();

	const back = await fsp.readFile(a);
	check(back.equals(data), 'readFile returns what was written');
	const st2 = await fsp.stat(a);
	check(st2.isFile() && st2.size === data.length, 'stat');

	// rename, link, symlink, mkdir, unlink
	await fsp.rename(a, b);
	await assert.rejects(fsp.stat(a), { code: 'ENOENT' });
	checks++;
	check((await fsp.stat(b)).size === data.length, 'stat after rename');
	const l = path.join(dir, 'hard');
	await fsp.link(b, l);
	check((await fsp.stat(b)).nlink === 2, 'nlink after link');
	const s = path.join(dir, 'sym');
	await fsp.symlink(b, s);
	check((await fsp.lstat(s)).isSymbolicLink(), 'lstat of symlink');
	check((await fsp.readlink(s)) === b, 'readlink');
	const sub = path.join(dir, 'sub');
	await fsp.mkdir(sub, 0o755);
	check((await fsp.stat(sub)).isDirectory(), 'mkdir');
	await assert.rejects(fsp.mkdir(sub), { code: 'EEXIST' });
	checks++;
	await assert.rejects(fsp.open(path.join(dir, 'none', 'x'), 'r'),
		{ code: 'ENOENT' });
	checks++;

	// many concurrent positioned reads on one file (more than the 64-entry
	// SQ ring: libuv takes the thread pool for requests that do not fit)
	fh = await fsp.open(b, 'r');
	const N = 400, len = 4096;
	const reads = [];
	for (let i = 0; i < N; i++) {
		const pos = (i * 7919 * 512) % (data.length - len);
		const buf = Buffer.alloc(len);
		reads.push(fh.read(buf, 0, len, pos).then(r => {
			check(r.bytesRead === len, `read ${i}: ${r.bytesRead}`);
			check(buf.equals(data.subarray(pos, pos + len)),
				`read ${i} data`);
		}));
	}
	await Promise.all(reads);
	await fh.close();

	// concurrent small files: write, read back, unlink
	const files = [];
	for (let i = 0; i < 64; i++)
		files.push((async () => {
			const p = path.join(sub, `f${i}`);
			const body = `file ${i} ` + 'x'.repeat(i * 13);
			await fsp.writeFile(p, body);
			check((await fsp.readFile(p, 'utf8')) === body,
				`small file ${i}`);
			await fsp.unlink(p);
		})());
	await Promise.all(files);
	check((await fsp.readdir(sub)).length === 0, 'all unlinked');

	// callback API too (uv_fs_* with a callback)
	await new Promise((resolve, reject) => {
		fs.writeFile(l, 'cb', err => {
			if (err)
				return reject(err);
			fs.readFile(l, 'utf8', (err2, d) => {
				if (err2)
					return reject(err2);
				check(d === 'cb', 'callback readFile');
				resolve();
			});
		});
	});
	await fsp.unlink(s);
	await fsp.unlink(l);
	await fsp.unlink(b);
	await fsp.rmdir(sub);
}

function tcpEcho() {
	return new Promise((resolve, reject) => {
		const server = net.createServer(sock => sock.pipe(sock));
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address();
			const payload = crypto.randomBytes(256 * 1024);
			const rounds = 8;
			let done = 0;
			const conns = [];
			for (let c = 0; c < 4; c++) {
				const sock = net.connect(port, '127.0.0.1');
				conns.push(sock);
				const chunks = [];
				let got = 0;
				sock.on('error', reject);
				sock.on('data', d => {
					chunks.push(d);
					got += d.length;
					if (got < payload.length * rounds)
						return;
					const all = Buffer.concat(chunks);
					for (let r = 0; r < rounds; r++)
						check(all.subarray(r * payload.length,
							(r + 1) * payload.length)
							.equals(payload), `echo ${c}/${r}`);
					sock.end();
					if (++done === conns.length)
						server.close(() => resolve());
				});
				sock.on('connect', () => {
					for (let r = 0; r < rounds; r++)
						sock.write(payload);
				});
			}
		});
	});
}

// CPU time of the process while the loop sleeps on a timer, after the
// rings have been used: a ring fd left readable would make the loop spin
// (epoll returns it at once), costing about the whole window.
function idleCpuMs(ms) {
	return new Promise(resolve => {
		const t0 = process.cpuUsage();
		setTimeout(() => {
			const d = process.cpuUsage(t0);
			resolve((d.user + d.system) / 1000);
		}, ms);
	});
}

async function main() {
	const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'uuring-node-'));
	let idle;
	try {
		await fsWork(dir);
		// fs requests and TCP traffic on the loop at the same time
		await Promise.all([tcpEcho(), fsWork(dir)]);
		idle = await idleCpuMs(400);
	} finally {
		await fsp.rm(dir, { recursive: true, force: true });
	}
	const res = JSON.stringify({ ok: true, checks,
		idle_window_ms: 400, idle_cpu_ms: Math.round(idle),
		node: process.versions.node, uv: process.versions.uv,
		UV_USE_IO_URING: process.env.UV_USE_IO_URING || '' });
	console.log(res);
	if (process.env.UURING_NODE_RESULT)
		fs.writeFileSync(process.env.UURING_NODE_RESULT, res + '\n');
}

main().catch(e => {
	console.error('FAIL:', e && e.stack || e);
	process.exit(1);
});
