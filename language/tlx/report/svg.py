"""A spec's plan as a picture: standalone SVG that any browser shows.

A ruler of bytes (SMEM) or columns (TMEM) along the top, one lane per buffer
(user) named on the left, every buffer of the user drawn where the planner put
it and coloured by its buffer group, and a last lane that marks where two or
more buffers share units (and the padding); a spec with phases gets one such
lane per phase, and each buffer's name says its phases. Buffers that alias sit one above
the other. Every number is the planner's (``planner.buffer_extents`` and
``planner.sharing_segments``); this module only scales them to pixels.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from .. import planner

# One colour per buffer group, cycling: distinguishable and light enough for
# black text on top.
_GROUP_COLOURS = (
    "#8fb8de",
    "#f4b183",
    "#a9d18e",
    "#ff9f9f",
    "#c9b3e6",
    "#d9c27e",
    "#f2a7d0",
    "#b0b0b0",
    "#9fd8d4",
    "#e6d36f",
)
_PADDING_COLOUR = "#eeeeee"
# Buffers of several groups overlap only where a user outside the tree sits.
_MIXED_COLOUR = "#d0d0d0"
_WIDTH = 1000
_NAME_WIDTH = 170
_MARGIN = 20
_LANE_HEIGHT = 26
_LANE_GAP = 6
_TOP = 64
# Roughly what one character of 11-pixel sans-serif text takes.
_CHARACTER_WIDTH = 6.5


def _tick_step(extent: int, wanted: int = 8) -> int:
    """The power of two (bytes and columns come in those) that cuts ``extent``
    into at most ``wanted`` ticks."""
    step = 1
    while step * wanted < extent:
        step *= 2
    return step


def group_colour(buffer_group: int) -> str:
    """The fill colour of a buffer group."""
    return _GROUP_COLOURS[buffer_group % len(_GROUP_COLOURS)]


def _text(x, y, content, *, anchor="start", size=11, weight="normal") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'font-weight="{weight}">{escape(content)}</text>'
    )


def _rect(x, y, width, height, fill, tooltip, *, stroke="#333333") -> str:
    return (
        f'<rect x="{x:.2f}" y="{y:.1f}" width="{max(width, 1.0):.2f}" height="{height}" '
        f'fill="{fill}" stroke="{stroke}" stroke-width="0.5"><title>{escape(tooltip)}</title>'
        "</rect>"
    )


def _shared_lane(segments, extents, buffers, unit, y, x_of, scale, show_padding) -> list[str]:
    """The rectangles of one lane that marks where buffers share units (and,
    when ``show_padding``, the padding)."""
    parts = []
    for segment in segments:
        x, width = x_of(segment.start), (segment.end - segment.start) * scale
        names = [f"{buffers[extents[o].user].name}[{extents[o].index}]" for o in segment.occupants]
        span = f"{unit} {segment.start} .. {segment.end}"
        if not names and show_padding:
            parts.append(
                _rect(x, y, width, _LANE_HEIGHT, _PADDING_COLOUR, f"padding: {span}", stroke="#999")
            )
        elif len(names) > 1:
            group = segment.buffer_group
            fill = group_colour(group) if group >= 0 else _MIXED_COLOUR
            tooltip = f"{span}, buffer group {group if group >= 0 else 'mixed'}: " + ", ".join(
                names
            )
            parts.append(_rect(x, y, width, _LANE_HEIGHT, fill, tooltip))
            if _CHARACTER_WIDTH * 3 <= width:
                middle = x + width / 2
                parts.append(
                    _text(middle, y + _LANE_HEIGHT / 2 + 4, f"x{len(names)}", anchor="middle")
                )
    return parts


def plan_svg(spec_plan) -> str:
    """The SVG document of one ``SpecPlan``."""
    plan = spec_plan.plan
    buffers = spec_plan.buffers
    unit = "bytes" if plan.storage == planner.Storage.SMEM else "columns"
    region = max(plan.region_size, 1)
    scale = (_WIDTH - _NAME_WIDTH - _MARGIN) / region
    extents = planner.buffer_extents(plan, buffers)
    # One "shared" lane for the region, or one per phase (the units the
    # buffers of that phase share: other phases' buffers may take them too).
    if plan.phases:
        shared_lanes = []
        for phase, members in enumerate(plan.phases):
            mine = [i for i, extent in enumerate(extents) if extent.user in members]
            phase_segments = planner.sharing_segments(plan, [extents[i] for i in mine])
            shared_lanes.append(
                (f"phase {phase} shares", phase_segments, [extents[i] for i in mine], False)
            )
    else:
        shared_lanes = [("shared", planner.sharing_segments(plan, extents), extents, True)]
    lanes = len(buffers) + len(shared_lanes)
    legend_top = _TOP + lanes * (_LANE_HEIGHT + _LANE_GAP) + 10
    groups = sorted({extent.buffer_group for extent in extents})
    height = legend_top + 30

    def x_of(units: int) -> float:
        return _NAME_WIDTH + units * scale

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}" '
        f'viewBox="0 0 {_WIDTH} {height}" font-family="sans-serif">',
        f'<rect width="{_WIDTH}" height="{height}" fill="white"/>',
        _text(
            _MARGIN,
            20,
            f"{spec_plan.name}: {plan.storage.value} region of {plan.region_size} {unit} "
            f"({plan.layout}; ideal {plan.ideal_bytes} bytes, padding {plan.padding_bytes})",
            size=13,
            weight="bold",
        ),
    ]

    # The ruler.
    ruler_y = _TOP - 14
    parts.append(
        f'<line x1="{x_of(0):.1f}" y1="{ruler_y}" x2="{x_of(region):.1f}" y2="{ruler_y}" '
        'stroke="#333333"/>'
    )
    step = _tick_step(region)
    for tick in [*range(0, region, step), region]:
        if tick != region and region - tick < step / 2:
            continue
        x = x_of(tick)
        parts.append(
            f'<line x1="{x:.1f}" y1="{ruler_y - 4}" x2="{x:.1f}" y2="{ruler_y + 4}" '
            'stroke="#333333"/>'
        )
        parts.append(_text(x, ruler_y - 7, str(tick), anchor="middle", size=10))
    parts.append(_text(_NAME_WIDTH - 8, ruler_y + 4, unit, anchor="end", size=10))

    # One lane per user (named with its phases when there are phases).
    for user, buffer in enumerate(buffers):
        y = _TOP + user * (_LANE_HEIGHT + _LANE_GAP)
        phases = [str(p) for p, members in enumerate(plan.phases) if user in members]
        name = f"{buffer.name} (phase {', '.join(phases)})" if phases else buffer.name
        parts.append(_text(_NAME_WIDTH - 8, y + _LANE_HEIGHT / 2 + 4, name, anchor="end"))
        view = plan.views[user]
        # A view from a byte offset: a dashed tick where it starts, and its start and
        # form in every tooltip of its buffers (docs/planner.md); a view per buffer group
        # (runtime_row, selected_rows): a tick where each group's view starts.
        per_group = view.per_group
        user_extents = [extent for extent in extents if extent.user == user]
        starts = {extent.index: view.view_start_of(extent.index) for extent in user_extents}

        def where(index, view=view, starts=starts, per_group=per_group):
            if view.base == 0 and not per_group:
                return ""
            return f", view from {unit} {starts[index]} ({view.form})"

        for start in sorted(set(starts.values())) if view.base != 0 or per_group else ():
            parts.append(
                f'<line x1="{x_of(start):.1f}" y1="{y - 2}" x2="{x_of(start):.1f}" '
                f'y2="{y + _LANE_HEIGHT + 2}" stroke="#333333" stroke-dasharray="2,2">'
                f"<title>{escape(f'{buffer.name}, view from {unit} {start} ({view.form})')}"
                "</title></line>"
            )
        for extent in user_extents:
            x, width = x_of(extent.start), (extent.end - extent.start) * scale
            label = f"{buffer.name}[{extent.index}]"
            tooltip = (
                f"{label}: {unit} {extent.start} .. {extent.end}, buffer group "
                f"{extent.buffer_group}{where(extent.index)}"
            )
            parts.append(
                _rect(x, y, width, _LANE_HEIGHT, group_colour(extent.buffer_group), tooltip)
            )
            for text in (label, f"[{extent.index}]"):
                if len(text) * _CHARACTER_WIDTH + 4 <= width:
                    parts.append(
                        _text(x + width / 2, y + _LANE_HEIGHT / 2 + 4, text, anchor="middle")
                    )
                    break

    # Where buffers share units (per phase, with phases), and the padding.
    for lane, (title, segments, lane_extents, show_padding) in enumerate(shared_lanes):
        y = _TOP + (len(buffers) + lane) * (_LANE_HEIGHT + _LANE_GAP)
        parts.append(_text(_NAME_WIDTH - 8, y + _LANE_HEIGHT / 2 + 4, title, anchor="end"))
        parts.extend(
            _shared_lane(segments, lane_extents, buffers, unit, y, x_of, scale, show_padding)
        )

    # The legend: one swatch per buffer group.
    x = _MARGIN
    for group in groups:
        label = f"buffer group {group}"
        width = 16 + len(label) * _CHARACTER_WIDTH + 14
        if x + width > _WIDTH - _MARGIN:
            parts.append(_text(x, legend_top + 12, f"... {len(groups)} groups"))
            break
        parts.append(
            f'<rect x="{x}" y="{legend_top}" width="12" height="12" '
            f'fill="{group_colour(group)}" stroke="#333333" stroke-width="0.5"/>'
        )
        parts.append(_text(x + 16, legend_top + 11, label))
        x += width
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
