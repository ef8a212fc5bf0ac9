"""``libdevice``'s elementary extras (``exp10``, ``sinpi``, ``cospi``, ``hypot``, the norms, ``rcbrt``,
the ``fast_*`` functions) and special functions (Bessel ``j0 j1 jn y0 y1 yn``, ``cyl_bessel_i0/i1``,
``lgamma``, ``tgamma``, ``erfinv``, ``erfcinv``, ``erfcx``, ``normcdf``, ``normcdfinv``).

fp32 arguments compute in fp64 and round once to fp32 (so fp32 results are within about half an
ulp plus the fp64 error), with the same fp64 code as fp64 arguments. The methods, written from the
mathematics:

* Bessel J0, J1, Y0, Y1: power series (with the logarithmic series for Y) for ``|x| <= 14``,
  Hankel's asymptotic expansion beyond; absolute error below about 1e-11 in fp64 (the series'
  cancellation near ``|x| = 14``), 1e-15 for ``|x| < 4``.
* ``jn``/``yn``: ``yn`` by the forward recurrence from Y0, Y1; ``jn`` by the forward recurrence
  where ``|x| > n`` and Miller's backward recurrence (normalised by ``J0 + 2*sum J2k = 1``)
  elsewhere (the first term of the series below 1e-20). For a run-time ``n`` the recurrences are unrolled for ``|n| <= 32`` (larger ``|n|``
  gives NaN); a compile-time ``n`` may be any size.
* I0, I1: power series for ``|x| <= 20``, the asymptotic expansion of ``e**x / sqrt(2 pi x)`` beyond
  (relative error about 1e-15).
* ``tgamma``/``lgamma``: Lanczos' approximation (g = 7, 9 terms; relative error about 1e-15) with
  the reflection formula (through ``sinpi``) below 1/2; ``lgamma`` has an absolute error about 1e-15
  near its zeros at 1 and 2.
* ``erfinv``/``erfcinv``/``normcdfinv``: Winitzki's closed form as a start, then Newton steps on
  ``erf`` (``|x| < 1/2``) or on ``log(erfc)`` (the tails), to about 1e-15 relative.
* ``erfcx``: ``exp(x*x) * erfc(x)`` with ``x*x`` split exactly, the asymptotic series beyond 25.
* ``fast_*``: libdevice's fast approximations; these compute the accurate functions, which is a
  valid implementation of them (``fast_dividef`` is plain ``/``).
"""

from __future__ import annotations

import math as pymath

from .. import dtypes as T
from .. import semantic
from ..core import _unwrap, tensor
from .libdevice_base import (F32, F64, FLOATS, FLOATS2, FLOATS3, FLOATS4, cast, dispatch, frexp, full_like,
                             is_finite, is_nan, math, pow2, two_prod, where)

EXPORTS: dict = {}
PI = pymath.pi
EULER = 0.57721566490153286061


def _export(fn):
    EXPORTS[fn.__name__] = fn
    return fn


def _via_f64(name: str, table, fn64):
    """A function of fp32/fp64 arguments computed by ``fn64`` on fp64 values."""
    def fn(*args):
        ts, _ = dispatch(name, table, *args)
        out = ts[0].dtype
        r = fn64(*[cast(t, F64) for t in ts])
        return cast(r, out)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _def(name: str, table, doc: str):
    def deco(fn64):
        f = _via_f64(name, table, fn64)
        f.__doc__ = doc
        EXPORTS[name] = f
        return fn64
    return deco


def _poly(x, coeffs):
    r = None
    for c in coeffs:
        r = full_like(x, c) if r is None else r * x + c
    return r


def _abs(x):
    return semantic.abs(x)


def _sq(x):
    return x * x


def _binary(op, x, y):
    return semantic._emit(op, (x, y), x.dtype, x.shape)


def _div(x, y):
    return _binary("divf_rn", x, y)


# -- elementary ----------------------------------------------------------------------------------


@_def("exp10", FLOATS, "``10**arg0``.")
def _exp10(x):
    return _binary("powf", full_like(x, 10.0), x)


def _sincospi(x):
    """(sin(pi x), cos(pi x)) with the argument reduced exactly (``x - n/2``, ``|r| <= 1/4``)."""
    n = math("roundeven", x * 2.0)
    r = x - n * 0.5
    big = _abs(x) >= 2.0 ** 52
    r = where(big, 0.0, r)
    n = where(big, 0.0, n)
    q = cast(cast(n - math("floor", n * 0.25) * 4.0, T.int32), T.int32)
    s, c = math("sin", r * PI), math("cos", r * PI)
    sin = where(q == 0, s, where(q == 1, c, where(q == 2, 0.0 - s, 0.0 - c)))
    cos = where(q == 0, c, where(q == 1, 0.0 - s, where(q == 2, 0.0 - c, s)))
    bad = semantic.logical_not(is_finite(x))
    return where(bad, x - x, sin), where(bad, x - x, cos)


@_def("sinpi", FLOATS, "``sin(pi * arg0)``, reduced exactly first.")
def _sinpi(x):
    return where(x == 0.0, x, _sincospi(x)[0])


@_def("cospi", FLOATS, "``cos(pi * arg0)``, reduced exactly first.")
def _cospi(x):
    return _sincospi(x)[1]


def _norm(*xs):
    """sqrt(sum x_i**2) without overflow or underflow: scaled by a power of two first."""
    m = _abs(xs[0])
    for x in xs[1:]:
        m = semantic.minmax("max", m, _abs(x))
    _, e = frexp(m)
    e = semantic.minmax("max", semantic.minmax("min", e, 1000), -1000)
    down, up = pow2(0 - e, F64), pow2(e, F64)
    s = None
    for x in xs:
        t = _sq(x * down)
        s = t if s is None else s + t
    r = semantic._emit("sqrt_rn", (s,), F64, s.shape) * up
    r = where(m == 0.0, 0.0, r)
    nan = is_nan(xs[0])
    for x in xs[1:]:
        nan = nan | is_nan(x)
    r = where(nan, float("nan"), r)
    return where(m == float("inf"), float("inf"), r)


@_def("hypot", FLOATS2, "``sqrt(arg0**2 + arg1**2)`` without overflow (about 1 ulp in fp64).")
def _hypot(x, y):
    return _norm(x, y)


@_def("rhypot", FLOATS2, "``1 / hypot(arg0, arg1)``.")
def _rhypot(x, y):
    return _div(full_like(x, 1.0), _norm(x, y))


@_def("norm3d", FLOATS3, "The Euclidean norm of three values.")
def _norm3d(x, y, z):
    return _norm(x, y, z)


@_def("rnorm3d", FLOATS3, "``1 / norm3d``.")
def _rnorm3d(x, y, z):
    return _div(full_like(x, 1.0), _norm(x, y, z))


@_def("norm4d", FLOATS4, "The Euclidean norm of four values.")
def _norm4d(x, y, z, w):
    return _norm(x, y, z, w)


@_def("rnorm4d", FLOATS4, "``1 / norm4d``.")
def _rnorm4d(x, y, z, w):
    return _div(full_like(x, 1.0), _norm(x, y, z, w))


@_def("rcbrt", FLOATS, "``1 / cbrt(arg0)``.")
def _rcbrt(x):
    return _div(full_like(x, 1.0), math("cbrt", x))


_F32 = {("fp32",): "fp32"}
for _name, _op in (("fast_sinf", "sin"), ("fast_cosf", "cos"), ("fast_tanf", "tan"), ("fast_log2f", "log2"),
                   ("fast_logf", "log"), ("fast_log10f", "log10"), ("fast_expf", "exp"), ("fast_tanhf", "tanh")):
    def _fast(arg0, _name=_name, _op=_op):
        (x,), _ = dispatch(_name, _F32, arg0)
        return math(_op, x)
    _fast.__name__ = _fast.__qualname__ = _name
    _fast.__doc__ = f"libdevice's fast ``{_op}`` of fp32 (computed as the accurate ``{_op}``)."
    EXPORTS[_name] = _fast


def fast_exp10f(arg0):
    """libdevice's fast ``10**x`` of fp32 (computed accurately)."""
    (x,), _ = dispatch("fast_exp10f", _F32, arg0)
    return _binary("powf", full_like(x, 10.0), x)


def fast_powf(arg0, arg1):
    """libdevice's fast ``pow`` of fp32 (computed as the accurate ``pow``)."""
    (x, y), _ = dispatch("fast_powf", {("fp32", "fp32"): "fp32"}, arg0, arg1)
    return _binary("powf", x, y)


def fast_dividef(arg0, arg1):
    """libdevice's fast fp32 division: ``arg0 / arg1`` (approximate where the target's ``/`` is)."""
    (x, y), _ = dispatch("fast_dividef", {("fp32", "fp32"): "fp32"}, arg0, arg1)
    return x / y


EXPORTS.update(fast_exp10f=fast_exp10f, fast_powf=fast_powf, fast_dividef=fast_dividef)


# -- Bessel functions ----------------------------------------------------------------------------

_SERIES_MAX = 14.0
_SERIES_TERMS = 48
_ASYM_TERMS = 14


def _hankel_pq(nu: int, x):
    """Hankel's P and Q for order ``nu`` at ``x`` (>= 14)."""
    mu = 4.0 * nu * nu
    inv = _div(full_like(x, 1.0), x)
    # a_k = prod_{j<=k} (mu - (2j-1)**2) / (k! 8**k), P = sum (-1)^k a_2k x^-2k, Q = sum (-1)^k a_2k+1 x^-(2k+1)
    a = [1.0]
    for k in range(1, 2 * _ASYM_TERMS + 2):
        a.append(a[-1] * (mu - (2 * k - 1) ** 2) / (k * 8.0))
    inv2 = inv * inv
    p = _poly(inv2, [(-1) ** k * a[2 * k] for k in reversed(range(_ASYM_TERMS))])
    q = _poly(inv2, [(-1) ** k * a[2 * k + 1] for k in reversed(range(_ASYM_TERMS))]) * inv
    return p, q


def _bessel_asym(nu: int, x):
    """(J_nu(x), Y_nu(x)) for x >= 14 (nu 0 or 1)."""
    p, q = _hankel_pq(nu, x)
    s, c = math("sin", x), math("cos", x)
    r = 1.0 / pymath.sqrt(2.0)
    if nu == 0:  # chi = x - pi/4
        cchi, schi = (c + s) * r, (s - c) * r
    else:  # chi = x - 3 pi / 4
        cchi, schi = (s - c) * r, (s + c) * -r
    amp = semantic._emit("sqrt_rn", (_div(full_like(x, 2.0 / PI), x),), F64, x.shape)
    return amp * (p * cchi - q * schi), amp * (p * schi + q * cchi)


def _j_series(nu: int, x):
    """J_nu(x) by its power series (nu 0 or 1)."""
    z = x * x * 0.25
    coeffs = []
    for k in range(_SERIES_TERMS):
        coeffs.append((-1) ** k / (pymath.factorial(k) * pymath.factorial(k + nu)))
    s = _poly(z, list(reversed(coeffs)))
    return s if nu == 0 else s * x * 0.5


def _y_series(nu: int, x, j):
    """Y_nu(x) by its logarithmic series, given J_nu(x)."""
    z = x * x * 0.25
    lg = math("log", x * 0.5) + EULER
    if nu == 0:
        coeffs, h = [], 0.0
        for k in range(_SERIES_TERMS):
            h = h + (1.0 / k if k else 0.0)
            coeffs.append((-1) ** (k + 1) * h / pymath.factorial(k) ** 2)
        return (2.0 / PI) * (lg * j + _poly(z, list(reversed(coeffs))))
    # Y1 = -2/(pi x) + (2/pi) ln(x/2) J1 - (1/pi) sum (-1)^k (psi(k+1) + psi(k+2)) (x/2)^(2k+1) / (k! (k+1)!)
    coeffs, h = [], 0.0
    for k in range(_SERIES_TERMS):
        hk = sum(1.0 / i for i in range(1, k + 1))
        hk1 = hk + 1.0 / (k + 1)
        psi_sum = (hk - EULER) + (hk1 - EULER)
        coeffs.append((-1) ** k * psi_sum / (pymath.factorial(k) * pymath.factorial(k + 1)))
    s = _poly(z, list(reversed(coeffs))) * (x * 0.5)
    return _div(full_like(x, -2.0 / PI), x) + (2.0 / PI) * (math("log", x * 0.5) * j) - s * (1.0 / PI)


def _jy(nu: int, x):
    """(J_nu(x), Y_nu(x)) for x >= 0."""
    small = x <= _SERIES_MAX
    xs = where(small, x, 1.0)
    xl = where(small, _SERIES_MAX + 1.0, x)
    js = _j_series(nu, xs)
    ys = _y_series(nu, where(xs == 0.0, 1.0, xs), js)
    ja, ya = _bessel_asym(nu, xl)
    j, y = where(small, js, ja), where(small, ys, ya)
    y = where(x == 0.0, float("-inf"), y)
    y = where(x == float("inf"), 0.0, y)
    j = where(x == float("inf"), 0.0, j)
    return j, y


@_def("j0", FLOATS, "The Bessel function of the first kind of order 0.")
def _j0(x):
    return _jy(0, _abs(x))[0]


@_def("j1", FLOATS, "The Bessel function of the first kind of order 1.")
def _j1(x):
    j = _jy(1, _abs(x))[0]
    return where(x < 0.0, 0.0 - j, j)


@_def("y0", FLOATS, "The Bessel function of the second kind of order 0 (NaN for negative values).")
def _y0(x):
    y = _jy(0, _abs(x))[1]
    return where(x < 0.0, float("nan"), y)


@_def("y1", FLOATS, "The Bessel function of the second kind of order 1 (NaN for negative values).")
def _y1(x):
    y = _jy(1, _abs(x))[1]
    return where(x < 0.0, float("nan"), y)


_NMAX = 32


def _order(n) -> tuple[int | None, tensor]:
    """(the order if known at compile time, else None; the order as a tensor)."""
    n = _unwrap(n)
    if isinstance(n, int):
        return n, None
    return None, n


def _yn64(nk: int | None, n, x):
    """Y_|n|(x) by the forward recurrence (x > 0)."""
    y0, y1 = _jy(0, x)[1], _jy(1, x)[1]
    top = abs(nk) if nk is not None else _NMAX
    res = y0 if nk == 0 else None
    if nk is None:
        an = semantic.abs(n)
        res = where(an == 0, y0, where(an == 1, y1, float("nan")))
    elif abs(nk) == 1:
        res = y1
    prev, cur = y0, y1
    two_over_x = _div(full_like(x, 2.0), x)
    for k in range(1, top):
        prev, cur = cur, two_over_x * (k * 1.0) * cur - prev
        if nk is None:
            res = where(an == k + 1, cur, res)
    if nk is not None and abs(nk) > 1:
        res = cur
    return res


def _jn64(nk: int | None, n, x):
    """J_|n|(x) (x >= 0): forward recurrence where x > n, Miller's backward one elsewhere."""
    j0, j1 = _jy(0, x)[0], _jy(1, x)[0]
    top = abs(nk) if nk is not None else _NMAX
    an = semantic.abs(n) if nk is None else None
    if top == 0:
        return j0
    safe_x = where(x < 1e-20, 1.0, x)
    two_over_x = _div(full_like(x, 2.0), safe_x)
    # forward
    fwd = where(an == 0, j0, where(an == 1, j1, float("nan"))) if nk is None else (j1 if top == 1 else None)
    prev, cur = j0, j1
    for k in range(1, top):
        prev, cur = cur, two_over_x * (k * 1.0) * cur - prev
        if nk is None:
            fwd = where(an == k + 1, cur, fwd)
    if nk is not None and top > 1:
        fwd = cur
    # Miller
    m = top + int(pymath.sqrt(160.0 * top)) + 12
    m += m % 2
    jp1, j = full_like(x, 0.0), full_like(x, 1e-30)
    total = full_like(x, 0.0)
    res = full_like(x, 0.0)
    for k in range(m, 0, -1):
        jm1 = two_over_x * (k * 1.0) * j - jp1
        jp1, j = j, jm1  # j is now J_{k-1}
        if k - 1 == top and nk is not None:
            res = j
        elif nk is None and k - 1 <= top:
            res = where(an == k - 1, j, res)
        if (k - 1) % 2 == 0 and k - 1 > 0:
            total = total + 2.0 * j
        if k % 4 == 0 or k == 1:  # x >= 1e-20: four steps grow by less than 1e100
            big = _abs(j) > 1e200
            scale = where(big, 1e-200, 1.0)
            j, jp1, total, res = j * scale, jp1 * scale, total * scale, res * scale
    total = total + j
    back = _div(res, total)
    # below 1e-20, the series' first term (x/2)^n / n! (the next is 1e-40 smaller)
    nf = cast(an, F64) if nk is None else full_like(x, float(top))
    lead = math("exp", nf * math("log", semantic.minmax("max", x, 1e-300) * 0.5) - _lgamma_pos(nf + 1.0))
    back = where(x < 1e-20, where(nf == 0.0, 1.0, lead), back)
    r = where(x > top * 1.0, fwd, back)
    if nk is None:
        r = where(an > _NMAX, float("nan"), r)
        return where(x == 0.0, where(an == 0, 1.0, 0.0), r)
    return where(x == 0.0, 0.0, r)


def _int_order_fn(name: str, kind: str):
    table = {("int32", "fp32"): "fp32", ("int32", "fp64"): "fp64"}

    def fn(arg0, arg1):
        nk, nt = _order(arg0)
        (n, x), _ = dispatch(name, table, arg0, arg1)
        out = x.dtype
        x = cast(x, F64)
        ax = _abs(x)
        if kind == "j":
            # J_n(-x) = (-1)^n J_n(x) and J_-n(x) = (-1)^n J_n(x)
            r = _jn64(nk, n, ax)
            if nk is None:
                r = where(((n & 1) == 1) & ((x < 0.0) ^ (n < 0)), 0.0 - r, r)
            elif nk % 2 == 1:
                r = where((x >= 0.0) if nk < 0 else (x < 0.0), 0.0 - r, r)
        else:
            r = _yn64(nk, n, ax)
            if nk is None:
                r = where(((n & 1) == 1) & (n < 0), 0.0 - r, r)
            elif nk < 0 and nk % 2 == 1:
                r = 0.0 - r
            r = where(x < 0.0, float("nan"), r)
            r = where(x == 0.0, float("-inf"), r)
        return cast(r, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The Bessel function of the {'first' if kind == 'j' else 'second'} kind of integer order "
                  f"``arg0`` (int32) at ``arg1``; see the module's docstring for the method and the order's range.")
    EXPORTS[name] = fn


_int_order_fn("jn", "j")
_int_order_fn("yn", "y")


def _bessel_i(nu: int, x):
    """I_nu(|x|) (nu 0 or 1) for x >= 0."""
    small = x <= 20.0
    xs = where(small, x, 1.0)
    z = xs * xs * 0.25
    coeffs = [1.0 / (pymath.factorial(k) * pymath.factorial(k + nu)) for k in range(40)]
    ser = _poly(z, list(reversed(coeffs)))
    if nu == 1:
        ser = ser * xs * 0.5
    xl = where(small, 21.0, x)
    mu = 4.0 * nu * nu
    a = [1.0]
    for k in range(1, 30):
        a.append(a[-1] * -(mu - (2 * k - 1) ** 2) / (k * 8.0))
    inv = _div(full_like(x, 1.0), xl)
    s = _poly(inv, list(reversed(a)))
    half = math("exp", xl * 0.5)
    asym = half * (_div(half * s, semantic._emit("sqrt_rn", (xl * (2.0 * PI),), F64, x.shape)))
    return where(small, ser, asym)


@_def("cyl_bessel_i0", FLOATS, "The modified Bessel function of the first kind of order 0.")
def _i0(x):
    return _bessel_i(0, _abs(x))


@_def("cyl_bessel_i1", FLOATS, "The modified Bessel function of the first kind of order 1.")
def _i1(x):
    r = _bessel_i(1, _abs(x))
    return where(x < 0.0, 0.0 - r, r)


# -- gamma ---------------------------------------------------------------------------------------

_LANCZOS_G = 7.0
_LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7]


def _lanczos_sum(x):
    """A(x) with Gamma(x) = sqrt(2 pi) t**(x - 1/2) e**-t A(x), t = x + g - 1/2, for x >= 1/2."""
    xm1 = x - 1.0
    s = full_like(x, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], start=1):
        s = s + _div(full_like(x, c), xm1 + i)
    return s


def _lgamma_pos(x):
    """log Gamma(x) for x >= 1/2."""
    t = x + (_LANCZOS_G - 0.5)
    return (0.5 * pymath.log(2 * PI) + (x - 0.5) * math("log", t)) - t + math("log", _lanczos_sum(x))


@_def("lgamma", FLOATS, "``log |Gamma(arg0)|``.")
def _lgamma(x):
    refl = x < 0.5
    xp = where(refl, 1.0 - x, x)
    lp = _lgamma_pos(xp)
    s = _abs(_sincospi(where(refl, x, 0.5))[0])
    lr = pymath.log(PI) - math("log", s) - lp
    r = where(refl, lr, lp)
    r = where((x == 1.0) | (x == 2.0), 0.0, r)
    r = where(refl & (s == 0.0), float("inf"), r)
    return where(_abs(x) == float("inf"), float("inf"), where(is_nan(x), x, r))


@_def("tgamma", FLOATS, "``Gamma(arg0)``.")
def _tgamma(x):
    refl = x < 0.5
    xp = where(refl, 1.0 - x, x)
    xp = semantic.minmax("min", xp, 180.0)
    t = xp + (_LANCZOS_G - 0.5)
    half = _binary("powf", t, (xp - 0.5) * 0.5)
    g = (half * (math("exp", 0.0 - t) * _lanczos_sum(xp) * pymath.sqrt(2 * PI))) * half
    s = _sincospi(where(refl, x, 0.5))[0]
    gr = _div(full_like(x, PI), s * g)
    r = where(refl, gr, g)
    r = where(refl & (s == 0.0), float("nan"), r)
    r = where(x == 0.0, _div(full_like(x, 1.0), x), r)
    r = where(x > 172.0, float("inf"), r)
    r = where(x == float("-inf"), float("nan"), r)
    return where(is_nan(x), x, r)


# -- error function inverses ---------------------------------------------------------------------

_WA = 0.147
_TWO_OVER_SQRT_PI = 2.0 / pymath.sqrt(PI)


def _winitzki(log1mx2):
    """Winitzki's approximation of |erfinv(x)| from log(1 - x*x)."""
    b = 2.0 / (PI * _WA) + log1mx2 * 0.5
    return semantic._emit("sqrt_rn", (semantic._emit("sqrt_rn", (b * b - log1mx2 * (1.0 / _WA),), F64, b.shape) - b,),
                          F64, b.shape)


def _erfcinv_pos(z):
    """erfcinv(z) for 0 < z <= 1 (>= 0): Newton on log(erfc(y)) = log(z)."""
    log1mx2 = math("log", z) + math("log", 2.0 - z)
    y = _winitzki(log1mx2)
    lz = math("log", z)
    for _ in range(5):
        lec = math("log", math("erfc", y))
        # d/dy log erfc(y) = -(2/sqrt(pi)) exp(-y^2) / erfc(y)
        deriv = 0.0 - _TWO_OVER_SQRT_PI * math("exp", 0.0 - y * y - lec)
        y = y - _div(lec - lz, deriv)
    return y


def _erfinv_small(x):
    """erfinv(x) for |x| <= 1/2: Newton on erf."""
    y = _winitzki(math("log1p", 0.0 - x * x))
    y = where(x < 0.0, 0.0 - y, y)
    for _ in range(4):
        y = y - _div(math("erf", y) - x, _TWO_OVER_SQRT_PI * math("exp", 0.0 - y * y))
    return y


def _erfcinv64(z):
    lo = z <= 1.0
    zz = where(lo, z, 2.0 - z)
    zz = where((zz > 0.0) & (zz <= 1.0), zz, 0.5)
    y = _erfcinv_pos(zz)
    y = where(zz == 1.0, 0.0, y)
    r = where(lo, y, 0.0 - y)
    r = where(z == 0.0, float("inf"), where(z == 2.0, float("-inf"), r))
    return where((z < 0.0) | (z > 2.0) | is_nan(z), float("nan"), r)


@_def("erfcinv", FLOATS, "The inverse of ``erfc`` on [0, 2].")
def _erfcinv(z):
    return _erfcinv64(z)


@_def("erfinv", FLOATS, "The inverse of ``erf`` on [-1, 1].")
def _erfinv(x):
    ax = _abs(x)
    small = ax <= 0.5
    ys = _erfinv_small(where(small, x, 0.25))
    yl = _erfcinv64(where(small, 0.5, 1.0 - ax))
    yl = where(x < 0.0, 0.0 - yl, yl)
    r = where(small, ys, yl)
    r = where(x == 0.0, x, r)
    return where((ax > 1.0) | is_nan(x), float("nan"), r)


@_def("normcdfinv", FLOATS, "The inverse of the standard normal distribution function on [0, 1].")
def _normcdfinv(p):
    return _erfcinv64(p * 2.0) * -pymath.sqrt(2.0)


@_def("normcdf", FLOATS, "The standard normal distribution function.")
def _normcdf(x):
    return math("erfc", x * (-1.0 / pymath.sqrt(2.0))) * 0.5


@_def("erfcx", FLOATS, "The scaled complementary error function ``exp(x*x) * erfc(x)``.")
def _erfcx(x):
    big = x > 25.0
    xs = where(big, 1.0, x)
    p, e = two_prod(xs, xs)
    direct = math("exp", p) * (1.0 + e) * math("erfc", xs)
    xl = where(big, x, 26.0)
    inv2 = _div(full_like(x, 1.0), xl * xl * 2.0)
    coeffs, c = [], 1.0
    for k in range(12):
        coeffs.append(c * (-1) ** k)
        c *= 2 * k + 1
    asym = _div(_poly(inv2, list(reversed(coeffs))), xl * pymath.sqrt(PI))
    r = where(big, asym, direct)
    r = where(x == float("inf"), 0.0, r)
    return where(x < -26.7, float("inf"), where(is_nan(x), x, r))


_ = (F32, T)
