// Preloaded with --import into a server the allocation bench measures. Over
// its IPC channel, `start` opens a window and `stop` closes it, answering
// the bytes the JavaScript heap allocated in between: what is in use at the
// end, less what was in use at the start, plus what each garbage collection
// of the window freed (v8.GCProfiler reports the heap before and after each).
// `profile-start`/`profile-stop` take a sampling heap profile that keeps the
// objects young-generation collections freed, which are most of a request's.
import { Session } from 'node:inspector/promises'
import { GCProfiler, getHeapStatistics } from 'node:v8'

let profiler
let usedAtStart = 0
const session = new Session()

process.on('message', async (message) => {
  if (message === 'start') {
    globalThis.gc?.()
    usedAtStart = getHeapStatistics().used_heap_size
    profiler = new GCProfiler()
    profiler.start()
    process.send({ started: true })
  } else if (message === 'stop') {
    const { statistics } = profiler.stop()
    const usedAtEnd = getHeapStatistics().used_heap_size
    const freed = statistics.reduce(
      (sum, gc) =>
        sum +
        gc.beforeGC.heapStatistics.usedHeapSize -
        gc.afterGC.heapStatistics.usedHeapSize,
      0,
    )
    process.send({
      allocated: usedAtEnd - usedAtStart + freed,
      gcs: statistics.length,
    })
  } else if (message === 'profile-start') {
    session.connect()
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    })
    process.send({ started: true })
  } else if (message === 'profile-stop') {
    const { profile } = await session.post('HeapProfiler.stopSampling')
    session.disconnect()
    process.send({ profile })
  }
})
