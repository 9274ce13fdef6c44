"""Scenarios of the executor's Python face under misuse and threads, each run in a child process
by tests/test_executor_lifetimes.py (so that a crash is a failure, not the end of the test run).

    python executor_lifetime_checks.py SCENARIO

exits 0 when the scenario holds and 1 with the reason otherwise. Every scenario checks the
statuses against CANN's rules (docs/behaviour.md §2), the results bit for bit against
tests/oracle.py, and canary arrays allocated after the executor's arrays could have been freed:
a run that wrote into freed memory changes them.
"""

import itertools
import sys
import threading
import time
import weakref

import numpy as np

from jax_threshold import aclnn
import oracle

SUCCESS = aclnn.ACLNN_SUCCESS
INVALID = aclnn.ACLNN_ERR_PARAM_INVALID
N = 2048  # the size: freed arrays of it are handed out again at once
FILL = np.float32(-7.0)
THRESHOLD = 0.5


class Failure(Exception):
  pass


def expect(cond, message):
  if not cond:
    raise Failure(message)


class Canaries:
  """Arrays of known contents, allocated where freed tensors' memory is handed out again."""

  def __init__(self):
    self.arrays = []

  def allocate(self, count=8, n=N):
    base = len(self.arrays)
    self.arrays += [np.full(n, 1000.0 + base + i, np.float32) for i in range(count)]

  def check(self, context):
    bad = [i for i, a in enumerate(self.arrays) if (a != 1000.0 + i).any()]
    expect(not bad, f"{context}: canary arrays {bad} were written (a run wrote freed memory)")


def _bits_equal(a, b):
  return np.array_equal(oracle.bits(a), oracle.bits(b))


def reproducer_repeatable_after_run():
  """A one-shot run, then set_repeatable and a second run: both refused, nothing else written."""

  def make():
    g, x, o = (np.full(N, 7.0, np.float32), np.full(N, 5.0, np.float32), np.zeros(N, np.float32))
    return aclnn.threshold_backward_get_workspace_size(g, x, 1.0, o, soc="host")[2]

  ex = make()
  expect(aclnn.threshold_backward(None, 0, ex) == SUCCESS, "the one-shot run failed")
  canaries = Canaries()
  canaries.allocate(48)
  status = ex.set_repeatable()
  expect(status == INVALID, f"set_repeatable after the run gave {status}, not {INVALID}")
  expect("before its first run" in aclnn.recent_error_message(), aclnn.recent_error_message())
  status = aclnn.threshold_backward(None, 0, ex)
  expect(status == INVALID, f"a second run gave {status}, not {INVALID}")
  canaries.check("after the second run")


def reproducer_destroy_during_run():
  """destroy() from another thread while a run reads arrays only the executor holds."""
  n = 1 << 24
  g, x, o = np.ones(n, np.float32), np.full(n, 2.0, np.float32), np.empty(n, np.float32)
  ex = aclnn.threshold_backward_get_workspace_size(g, x, 0.5, o, soc="host")[2]
  expect(ex.set_repeatable() == SUCCESS, "set_repeatable failed")
  del g, x, o
  statuses = []
  t = threading.Thread(target=lambda: statuses.append(aclnn.threshold_backward(None, 0, ex)))
  t.start()
  time.sleep(0.003)
  status = ex.destroy()
  t.join()
  expect(status == SUCCESS, f"destroy gave {status}")
  expect(statuses[0] in (SUCCESS, INVALID), f"the run gave {statuses[0]}")


def destroy_returns_after_the_run():
  """destroy() during a run returns once the run has written all of out."""
  n = 1 << 24
  g = np.arange(n, dtype=np.float32)
  x = np.tile(np.array([0.0, 1.0, 0.25, 2.0], np.float32), n // 4)
  out = np.full(n, FILL, np.float32)
  ex = aclnn.threshold_backward_get_workspace_size(g, x, THRESHOLD, out, soc="host")[2]
  expect(ex.set_repeatable() == SUCCESS, "set_repeatable failed")
  statuses = []
  t = threading.Thread(target=lambda: statuses.append(aclnn.threshold_backward(None, 0, ex)))
  t.start()
  while t.is_alive() and (out[:: 1 << 12] == FILL).all():
    pass  # until the run has begun writing out
  status = ex.destroy()
  written = out[:: 1 << 10].copy()  # at once (a sample of every block), before the join
  t.join()
  expect(status == SUCCESS, f"destroy gave {status}")
  expect(statuses == [SUCCESS], f"the run gave {statuses}")
  expect(
    _bits_equal(written, oracle.threshold_backward(g, x, THRESHOLD)[:: 1 << 10]),
    "destroy returned before the run had written all of out",
  )


# ---- Every order of up to four calls, against a model of CANN's rules ---------------------------


class Model:
  """CANN's rules: repeatable before the first run; a non-repeatable executor runs once; nothing
  after destroy; destroying a non-repeatable executor is an error code (it is released all the
  same)."""

  def __init__(self):
    self.started = self.repeatable = self.destroyed = False

  def may_run(self):
    return not self.destroyed and (self.repeatable or not self.started)

  def repeatable_status(self):
    if self.destroyed or (self.started and not self.repeatable):
      return INVALID
    self.repeatable = True
    return SUCCESS

  def run_status(self):
    if not self.may_run():
      return INVALID
    self.started = True
    return SUCCESS

  def rebind_status(self):
    return INVALID if self.destroyed else SUCCESS

  def destroy_status(self):
    if self.destroyed:
      return INVALID
    self.destroyed = True
    return SUCCESS if self.repeatable else INVALID


def _fresh(rng):
  return rng.standard_normal(N).astype(np.float32)


def _one_order(order, rng, canaries):
  """Runs `order` on an executor whose arrays only it holds; checks every status, which arrays
  it holds, and every out against the oracle."""
  g, x = _fresh(rng), _fresh(rng)
  bound = {"g": g.copy(), "x": x.copy()}  # what the plan reads now (copies: for the oracle)
  outs = []  # [weakref to out, expected contents]

  def new_out():
    out = np.full(N, FILL, np.float32)
    outs.append([weakref.ref(out), np.full(N, FILL, np.float32)])
    return out

  status, _, ex = aclnn.threshold_backward_get_workspace_size(
    g, x, THRESHOLD, new_out(), soc="host"
  )
  expect(status == SUCCESS, f"phase one gave {status}")
  held = [weakref.ref(g), weakref.ref(x), outs[0][0]]  # what the executor must keep alive
  bound_out = 0  # the index in outs of the out the plan writes now
  del g, x
  model = Model()
  for step, op in enumerate(order):
    context = f"order {order}, step {step} ({op})"
    if op == "repeatable":
      got, want = ex.set_repeatable(), model.repeatable_status()
    elif op == "run":
      got, want = aclnn.threshold_backward(None, 0, ex), model.run_status()
      if want == SUCCESS:
        outs[bound_out][1] = oracle.threshold_backward(bound["g"], bound["x"], THRESHOLD)
    elif op == "rebind":
      x2 = _fresh(rng)
      x2_copy = x2.copy()
      out2 = new_out()
      got = ex.set_input_tensor_addr(1, x2)
      got2 = ex.set_output_tensor_addr(0, out2)
      want = model.rebind_status()
      expect(got2 == want, f"{context}: rebinding out gave {got2}, not {want}")
      if want == SUCCESS and model.may_run():
        bound["x"] = x2_copy
        bound_out = len(outs) - 1
        held[1], held[2] = weakref.ref(x2), outs[bound_out][0]
      del x2, out2
    else:
      got, want = ex.destroy(), model.destroy_status()
    expect(got == want, f"{context}: status {got}, not {want}")
    canaries.allocate(4)
    if model.may_run():
      expect(all(r() is not None for r in held), f"{context}: an array it may still use was freed")
    else:
      dead = all(r() is None for r in held) and all(r() is None for r, _ in outs)
      expect(dead, f"{context}: it can never run again, yet it still holds arrays")
  for i, (ref, expected) in enumerate(outs):
    out = ref()
    if out is not None:
      expect(_bits_equal(out, expected), f"order {order}: out #{i} is not the oracle's")
  if not model.destroyed:
    ex.destroy()


def misuse_orders():
  """Every sequence of up to four of set_repeatable, run, rebind and destroy."""
  rng = np.random.default_rng(37)
  ops = ("repeatable", "run", "rebind", "destroy")
  canaries = Canaries()
  count = 0
  for length in range(1, 5):
    for order in itertools.product(ops, repeat=length):
      _one_order(order, rng, canaries)
      count += 1
  canaries.check(f"after {count} orders")


# ---- Threads -----------------------------------------------------------------------------------


def _threads_round(context, n, rng, canaries):
  """One round: a repeatable executor whose g and x only it holds; two threads run it, one
  rebinds out and x, one destroys it, all released by one barrier."""
  g, x = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
  expected = oracle.threshold_backward(g, x, THRESHOLD)
  x_values = x.copy()
  kept = [np.full(n, FILL, np.float32) for _ in range(3)]  # outs the test keeps: checked
  ex = aclnn.threshold_backward_get_workspace_size(g, x, THRESHOLD, kept[0], soc="host")[2]
  expect(ex.set_repeatable() == SUCCESS, "set_repeatable failed")
  del g, x
  dropped = []  # weakrefs to the outs only the executor held
  statuses = {"run": [], "rebind": [], "destroy": []}
  after_destroy = []  # the kept outs as destroy() returned
  barrier = threading.Barrier(4)
  delay = float(rng.uniform(0, 0.002))

  def runner():
    barrier.wait()
    for _ in range(3):
      statuses["run"].append(aclnn.threshold_backward(None, 0, ex))

  def rebinder():
    barrier.wait()
    for k in range(4):
      # The same values at new addresses: every run's result is `expected`. The odd outs are
      # held by the executor only.
      if k % 2 == 0:
        out2 = kept[1 + k // 2]
      else:
        out2 = np.full(n, FILL, np.float32)
        dropped.append(weakref.ref(out2))
      statuses["rebind"].append(ex.set_output_tensor_addr(0, out2))
      statuses["rebind"].append(ex.set_input_tensor_addr(1, x_values.copy()))
      del out2

  def destroyer():
    barrier.wait()
    time.sleep(delay)
    statuses["destroy"].append(ex.destroy())
    after_destroy.extend(k.copy() for k in kept)

  threads = [threading.Thread(target=f) for f in (runner, runner, rebinder, destroyer)]
  for t in threads:
    t.start()
  canaries.allocate(4, n)  # while the threads run
  for t in threads:
    t.join()
  expect(statuses["destroy"] == [SUCCESS], f"{context}: destroy gave {statuses['destroy']}")
  expect(set(statuses["run"]) <= {SUCCESS, INVALID}, f"{context}: runs {statuses['run']}")
  expect(set(statuses["rebind"]) <= {SUCCESS, INVALID}, f"{context}: {statuses['rebind']}")
  expect(aclnn.threshold_backward(None, 0, ex) == INVALID, f"{context}: ran after destroy")
  untouched = np.full(n, FILL, np.float32)
  for i, k in enumerate(kept):
    expect(_bits_equal(k, after_destroy[i]), f"{context}: out #{i} was written after destroy()")
    expect(
      _bits_equal(k, untouched) or _bits_equal(k, expected), f"{context}: kept out #{i} is neither"
    )
  expect(all(r() is None for r in dropped), f"{context}: a destroyed executor holds arrays")


def threads_run_rebind_and_destroy():
  """_threads_round, round after round: at most 120 rounds or 20 seconds."""
  rounds, seconds, n = 120, 20.0, 1 << 16
  rng = np.random.default_rng(7)
  canaries = Canaries()
  deadline = time.monotonic() + seconds
  done = 0
  while done < rounds and time.monotonic() < deadline:
    _threads_round(f"round {done}", n, rng, canaries)
    done += 1
  canaries.check(f"after {done} rounds")
  print(f"{done} rounds")


SCENARIOS = {
  f.__name__: f
  for f in (
    reproducer_repeatable_after_run,
    reproducer_destroy_during_run,
    destroy_returns_after_the_run,
    misuse_orders,
    threads_run_rebind_and_destroy,
  )
}

if __name__ == "__main__":
  try:
    SCENARIOS[sys.argv[1]]()
  except Failure as e:
    print(f"FAIL: {e}", file=sys.stderr)
    sys.exit(1)
