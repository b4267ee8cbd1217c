# SPDX-License-Identifier: GPL-2.0
"""The timeline as a picture (matplotlib): one row per AI core, stream and
host thread, and the HBM counter underneath."""

from __future__ import annotations

from .timeline import Timeline

__all__ = ["render_png"]


def render_png(tl: Timeline, path: str, width: float = 12.0) -> None:
    """Draw ``tl`` into the PNG file ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [t for t in sorted(tl.tracks.values(),
                              key=lambda t: (t.group, not t.name.startswith(
                                  "AI core"), t.name)) if not t.counter]
    rows = [t for t in rows if any(s.track is t for s in tl.slices)]
    counters = [u for u in tl.counters if tl.counters[u]]
    t0, t1 = tl.span()
    scale = 1e6     # ms
    fig, axes = plt.subplots(
        2 if counters else 1, 1, sharex=True, squeeze=False,
        figsize=(width, 1.0 + 0.35 * max(len(rows), 1) + (1.5 if counters
                                                          else 0)),
        gridspec_kw={"height_ratios": [max(len(rows), 1), 3]
                     if counters else [1]})
    ax = axes[0][0]
    names = sorted({s.name for s in tl.slices})
    cmap = plt.get_cmap("tab20")
    colour = {n: cmap(i % 20) for i, n in enumerate(names)}
    for y, track in enumerate(rows):
        sl = [s for s in tl.slices if s.track is track]
        ax.broken_barh([((s.start_ns - t0) / scale,
                         max(s.dur_ns, 1) / scale) for s in sl],
                       (y - 0.4, 0.8),
                       facecolors=[colour[s.name] for s in sl])
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(["%s: %s" % (t.group, t.name) for t in rows],
                       fontsize=7)
    ax.invert_yaxis()
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[n])
               for n in names[:20]]
    if handles:
        ax.legend(handles, names[:20], fontsize=6, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    ax.set_title("davinci timeline")
    if counters:
        cx = axes[1][0]
        for u in counters:
            pts = sorted(tl.counters[u])
            pts.append((max(t1, pts[-1][0]), pts[-1][1]))
            cx.step([(ts - t0) / scale for ts, _ in pts],
                    [v / (1 << 20) for _, v in pts], where="post",
                    label="%s %s" % (tl.tracks[u].group, tl.tracks[u].name))
        cx.set_ylabel("MiB", fontsize=7)
        cx.legend(fontsize=6)
    axes[-1][0].set_xlabel("ms")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
