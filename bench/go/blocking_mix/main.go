// blocking_mix -- the goroutine side of Li & Hu's (JEThread) Figs. 1-3, driven by
// bench/blocking_mix.c (-g).
//
// The same three tasks as the C side: blocking (-io read: a 4 KiB O_DIRECT read from an unlinked
// temp file; -io sync: pwrite 4 KiB over its allocated block, then fdatasync; task i uses file
// i mod -files), compute (-loops steps of the same hash chain) and empty. One go statement per
// task, then a WaitGroup.
//
// Protocol, so its runs interleave with the C implementations' in one driver: after opening its
// files it prints "ready"; then each line on stdin is "GOMAXPROCS kinds" (kinds: one letter per
// task, b/c/e), and it answers with the run's wall time in seconds, or "error: ...". It exits
// when stdin closes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const ioBytes = 4096

var (
	fds      []int
	ioBuf    []byte // 4 KiB aligned for O_DIRECT; tasks write it, or read into it unlooked-at
	ioRead   bool
	loops    int64
	sink     uint64
	ioFailed atomic.Value
)

func compute(x uint64, n int64) {
	for i := int64(0); i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	atomic.StoreUint64(&sink, x)
}

func blockIO(i int) {
	fd := fds[i%len(fds)]
	if ioRead {
		if n, err := syscall.Pread(fd, ioBuf, 0); err != nil || n != ioBytes {
			ioFailed.Store(fmt.Sprintf("pread: %v", err))
		}
		return
	}
	if n, err := syscall.Pwrite(fd, ioBuf, 0); err != nil || n != ioBytes {
		ioFailed.Store(fmt.Sprintf("pwrite: %v", err))
		return
	}
	if err := syscall.Fdatasync(fd); err != nil {
		ioFailed.Store(fmt.Sprintf("fdatasync: %v", err))
	}
}

func run(kinds string) float64 {
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(len(kinds))
	for i := 0; i < len(kinds); i++ {
		go func(i int, k byte) {
			switch k {
			case 'b':
				blockIO(i)
			case 'c':
				compute(uint64(i), loops)
			}
			wg.Done()
		}(i, kinds[i])
	}
	wg.Wait()
	return time.Since(t0).Seconds()
}

// One temp file in $TMPDIR with one allocated block, unlinked before it returns, even when a
// step fails: nothing is left behind. For reads it is opened again with O_DIRECT.
func openFile(path string) (int, error) {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL, 0600)
	if err != nil {
		return -1, err
	}
	defer syscall.Unlink(path)
	if _, err := syscall.Pwrite(fd, ioBuf, 0); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	if err := syscall.Fsync(fd); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	if !ioRead {
		return fd, nil
	}
	syscall.Close(fd)
	return syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECT, 0)
}

func openFiles(n int) error {
	for i := 0; i < n; i++ {
		fd, err := openFile(fmt.Sprintf("%s/crew-blocking-mix-go-%d-%d", os.TempDir(), os.Getpid(), i))
		if err != nil {
			return err
		}
		fds = append(fds, fd)
	}
	return nil
}

func main() {
	flag.Int64Var(&loops, "loops", 1000, "steps of the compute task")
	nfiles := flag.Int("files", 256, "temp files for the blocking tasks")
	mode := flag.String("io", "read", "blocking task: read (O_DIRECT) or sync (pwrite + fdatasync)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s [-loops N] [-files N] [-io read|sync]\n"+
			"The goroutine peer of bench/blocking_mix (-g), which drives it through stdin;\n"+
			"-h, --help: this text.\n", os.Args[0])
		flag.PrintDefaults()
	}
	for _, arg := range os.Args[1:] { // asked for, the usage goes to stdout (errors: stderr)
		if arg == "-h" || arg == "-help" || arg == "--help" {
			flag.CommandLine.SetOutput(os.Stdout)
		}
	}
	flag.Parse()
	ioRead = *mode == "read"
	raw := make([]byte, 2*ioBytes)
	off := int(-uintptr(unsafe.Pointer(&raw[0])) & (ioBytes - 1))
	ioBuf = raw[off : off+ioBytes]
	for i := range ioBuf {
		ioBuf[i] = 0x5a
	}
	defer func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	if err := openFiles(*nfiles); err != nil {
		fmt.Printf("error: %v\n", err)
		return
	}
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return // the driver closed the pipe
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			fmt.Println("error: expected \"GOMAXPROCS kinds\"")
			continue
		}
		if procs, err := strconv.Atoi(f[0]); err == nil && procs > 0 {
			runtime.GOMAXPROCS(procs)
		}
		ioFailed = atomic.Value{}
		t := run(f[1])
		if e := ioFailed.Load(); e != nil {
			fmt.Printf("error: %v\n", e)
			continue
		}
		fmt.Printf("%.6f\n", t)
	}
}
