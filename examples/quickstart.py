"""Quickstart: threshold_backward and the threshold activation through the JAX API.

The {2, 2} example of CANN's aclnnThresholdBackward documentation, under every
available implementation ("reference" always; "ffi" once the native extension
is built), plus a jax.grad through `jax_threshold.threshold`.

    python examples/quickstart.py
"""

import jax
import jax.numpy as jnp
import numpy as np

import jax_threshold as jt


def main():
  x = jnp.array([[0.2, 1.2], [2.2, 3.2]], jnp.float32)
  grad_output = jnp.array([[4.5, 4.4], [4.3, 4.2]], jnp.float32)
  print("available implementations:", jt.available_implementations())

  for impl in jt.available_implementations():
    with jt.implementation(impl):
      # Threshold 1.0: only x = 0.2 is at or below it.
      out = jax.jit(jt.threshold_backward)(grad_output, x, 1.0)
      print(f"[{impl}] threshold_backward(threshold=1.0) =\n{np.asarray(out)}")
      np.testing.assert_array_equal(out, np.array([[0.0, 4.4], [4.3, 4.2]], np.float32))
      # Threshold 0.0: every x passes (CANN's documentation claims a 0 here; 0.2 > 0).
      out = jt.threshold_backward(grad_output, x, 0.0)
      print(f"[{impl}] threshold_backward(threshold=0.0) =\n{np.asarray(out)}")
      np.testing.assert_array_equal(out, grad_output)

      # The forward activation y = x if x > 1.0 else -1.0; its gradient runs
      # through the threshold_backward primitive.
      loss = lambda x, value: jnp.sum(grad_output * jt.threshold(x, 1.0, value))
      dx, dvalue = jax.grad(loss, argnums=(0, 1))(x, -1.0)
      print(f"[{impl}] d/dx sum(g * threshold(x, 1.0, -1.0)) =\n{np.asarray(dx)}")
      print(f"[{impl}] d/dvalue = {float(dvalue)} (the g where x <= 1.0)")
      np.testing.assert_array_equal(dx, np.array([[0.0, 4.4], [4.3, 4.2]], np.float32))
      np.testing.assert_allclose(dvalue, 4.5)

  jaxpr = jax.make_jaxpr(jax.grad(lambda x: jt.threshold(x, 1.0, 0.0).sum()))(x)
  print("the gradient's jaxpr uses the primitive:", "threshold_backward" in str(jaxpr))


if __name__ == "__main__":
  main()
