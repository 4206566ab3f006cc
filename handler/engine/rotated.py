"""Rotated boxes: their corners, their axis-aligned envelope, and the exact IoU of two of them.

A rotated box is its box before turning, `[x_min, y_min, x_max, y_max]`, and `angle`: degrees
clockwise on the image (y pointing down) about its centre. An axis-aligned box has angle 0,
so a rotated box has the same width, height, area and centre as its box before turning.

The IoU of two rotated boxes is that of two convex quadrilaterals, computed exactly as
detectron2's and mmcv's rotated IoU do, vectorised over pairs: the intersection is the convex
polygon spanned by the corners of each inside the other and the crossings of their edges
(at most 4 + 4 + 16 points); its points sorted by angle about their centroid give its area
by the shoelace formula.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from handler.boxes import BoolArray, FloatArray, box_area, box_size, is_turned
from handler.engine.iou import iou_of_intersection

# A point this close to an edge (relative to the edge's length and the coordinates) is on it:
# corners shared by two boxes count once, whichever side rounding puts them on.
_ON_EDGE: Final = 1e-9
# Before turning, the corners in order around the box: top-left, top-right, bottom-right,
# bottom-left (clockwise on the image), as fractions of the box from its centre.
_UNIT_CORNERS: Final = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])
Corners = npt.NDArray[np.float64]  # (N, 4, 2)


def corners(xyxy: FloatArray, angle: FloatArray) -> Corners:
    """(N, 4, 2) corners of the boxes turned by `angle` about their centres, clockwise on the image."""
    centre = (xyxy[:, :2] + xyxy[:, 2:]) / 2
    size = box_size(xyxy)
    radians = np.deg2rad(angle)
    cos, sin = np.cos(radians)[:, None], np.sin(radians)[:, None]
    offset = _UNIT_CORNERS[None] * size[:, None, :]  # (N, 4, 2)
    dx, dy = offset[..., 0], offset[..., 1]
    turned: Corners = np.stack((dx * cos - dy * sin, dx * sin + dy * cos), axis=-1) + centre[:, None, :]
    return turned


def rectangles(quad: Corners) -> tuple[FloatArray, FloatArray]:
    """The smallest rectangle holding each quadrilateral of 4 written corners, as its box before
    turning and its angle: a quadrilateral that is a rectangle (a YOLO OBB or DOTA line written
    from one) gives that rectangle back, whatever corner it starts at and whichever way it goes.

    The smallest enclosing rectangle has a side along one of the hull's edges (Freeman and
    Shapira), so each direction between two corners is tried: 6 per box, vectorised."""
    first, second = np.triu_indices(4, k=1)
    direction = quad[:, second] - quad[:, first]  # (N, 6, 2)
    length = np.hypot(direction[..., 0], direction[..., 1])
    # Corners that coincide give no direction: along x (a quadrilateral that is a point is a box of size 0).
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = np.where(length[..., None] > 0, direction / length[..., None], [1.0, 0.0])
    normal = np.stack((-unit[..., 1], unit[..., 0]), axis=-1)
    along = np.einsum("npk,nck->npc", unit, quad)  # (N, 6, 4): each corner's place along each direction
    across = np.einsum("npk,nck->npc", normal, quad)
    width = along.max(axis=2) - along.min(axis=2)
    height = across.max(axis=2) - across.min(axis=2)
    area = np.where(length > 0, width * height, np.inf)
    area[~np.isfinite(area).any(axis=1), 0] = 0.0  # every direction degenerate: the first
    best = np.argmin(area, axis=1)[:, None]

    def pick(values: FloatArray) -> FloatArray:
        picked: FloatArray = np.take_along_axis(values, best, axis=1)[:, 0]
        return picked

    middle_along = pick((along.max(axis=2) + along.min(axis=2)) / 2)
    middle_across = pick((across.max(axis=2) + across.min(axis=2)) / 2)
    u, n = pick(unit[..., 0]), pick(unit[..., 1])
    centre = np.stack((middle_along * u - middle_across * n, middle_along * n + middle_across * u), axis=1)
    size = np.stack((pick(width), pick(height)), axis=1)
    xyxy = np.concatenate((centre - size / 2, centre + size / 2), axis=1)
    # Turned by half a turn, a rectangle is itself: angles in [-90, 90).
    angle: FloatArray = np.remainder(np.rad2deg(np.arctan2(n, u)) + 90.0, 180.0) - 90.0
    # Corners that draw an upright rectangle give it exactly, unturned (no rounding of a turn).
    upright = np.concatenate((quad.min(axis=1), quad.max(axis=1)), axis=1)
    is_upright = box_area(upright) <= pick(area)
    xyxy[is_upright], angle[is_upright] = upright[is_upright], 0.0
    return xyxy, angle


def convex_quads(quad: Corners) -> Corners:
    """(N, 4, 2) each quadrilateral of 4 written corners as the convex one holding them, its corners
    clockwise on the image, whatever order they were written in: sorted by angle about their
    centroid, a corner inside the triangle of the others (the quadrilateral is then a triangle)
    takes the place of the corner before it. An affine map of the corners maps this one too."""
    offset = quad - quad.mean(axis=1, keepdims=True)
    order = np.argsort(_pseudo_angle(offset), axis=1, kind="stable")
    ring: Corners = np.take_along_axis(quad, order[..., None], axis=1)
    before, after = np.roll(ring, 1, axis=1), np.roll(ring, -1, axis=1)
    # Clockwise on the image turns right at every corner: a left turn is a corner inside.
    inside = _cross(ring - before, after - ring) < 0
    ring[inside] = before[inside]
    return ring


def envelope(xyxy: FloatArray, angle: FloatArray) -> FloatArray:
    """(N, 4) the smallest axis-aligned box holding each turned box (the box itself when not turned):
    about the centre, half of w·|cos| + h·|sin| across and w·|sin| + h·|cos| down."""
    turned = is_turned(angle)
    if not turned.any():
        return xyxy
    out = xyxy.copy()
    box = xyxy[turned]
    radians = np.deg2rad(angle[turned])
    cos, sin = np.abs(np.cos(radians)), np.abs(np.sin(radians))
    half_w, half_h = (box_size(box) / 2).T
    reach = np.stack((half_w * cos + half_h * sin, half_w * sin + half_h * cos), axis=1)
    centre = (box[:, :2] + box[:, 2:]) / 2
    out[turned] = np.concatenate((centre - reach, centre + reach), axis=1)
    return out


def _cross(a: FloatArray, b: FloatArray) -> FloatArray:
    result: FloatArray = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return result


def _inside(points: Corners, polygon: Corners, tolerance: FloatArray) -> BoolArray:
    """(N, P) whether each of P points lies in (or within `tolerance` of) the pair's convex quadrilateral."""
    edges = np.roll(polygon, -1, axis=1) - polygon  # (N, 4, 2)
    to_point = points[:, :, None, :] - polygon[:, None, :, :]  # (N, P, 4, 2)
    side = _cross(edges[:, None], to_point)  # > 0 inside: the corners go clockwise on the image
    length = np.hypot(edges[..., 0], edges[..., 1])[:, None]  # side / length: the distance to the edge
    inside: BoolArray = (side >= -(tolerance[:, None, None] * length)).all(axis=2)
    return inside


def _crossings(a: Corners, b: Corners) -> tuple[FloatArray, BoolArray]:
    """(N, 16, 2) points where an edge of `a` crosses an edge of `b`, and which exist."""
    start_a = a[:, :, None, :]
    start_b = b[:, None, :, :]
    edge_a = (np.roll(a, -1, axis=1) - a)[:, :, None, :]
    edge_b = (np.roll(b, -1, axis=1) - b)[:, None, :, :]
    between = start_b - start_a
    denominator = _cross(edge_a, edge_b)  # (N, 4, 4); 0 for parallel edges
    with np.errstate(divide="ignore", invalid="ignore"):
        along_a = _cross(between, edge_b) / denominator
        along_b = _cross(between, edge_a) / denominator
    exists = (denominator != 0) & (along_a >= 0) & (along_a <= 1) & (along_b >= 0) & (along_b <= 1)
    points = start_a + np.where(exists, along_a, 0.0)[..., None] * edge_a
    n = len(a)
    return points.reshape(n, 16, 2), exists.reshape(n, 16)


def _pseudo_angle(offset: FloatArray) -> FloatArray:
    """An increasing function of each vector's angle (the "diamond angle", no arctan): -1 to 3."""
    dx, dy = offset[..., 0], offset[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = np.nan_to_num(dy / (np.abs(dx) + np.abs(dy)))
    result: FloatArray = np.where(dx >= 0, slope, 2 - slope)
    return result


def intersection_area(a: Corners, b: Corners) -> FloatArray:
    """(N,) area of the overlap of the pairs' convex quadrilaterals (corners clockwise on the image)."""
    origin = a.mean(axis=1, keepdims=True)  # about the first's centre: small numbers, the same area
    a, b = a - origin, b - origin
    scale = np.maximum(np.abs(a).max(axis=(1, 2)), np.abs(b).max(axis=(1, 2)))
    tolerance = _ON_EDGE * scale
    crossing, crosses = _crossings(a, b)
    points = np.concatenate((a, b, crossing), axis=1)  # (N, 24, 2)
    valid = np.concatenate((_inside(a, b, tolerance), _inside(b, a, tolerance), crosses), axis=1)
    count = valid.sum(axis=1)
    centroid = np.einsum("npk,np->nk", points, valid) / np.maximum(count, 1)[:, None]
    offset = points - centroid[:, None, :]
    order = np.argsort(np.where(valid, _pseudo_angle(offset), np.inf), axis=1)
    ring = np.take_along_axis(offset, order[..., None], axis=1)
    # The valid points come first, in order about the centroid: their consecutive edges, then the
    # edge from the last back to the first, bound the overlap.
    following = np.arange(ring.shape[1])[None, :] < (count - 1)[:, None]
    edges = np.where(following, _cross(ring, np.roll(ring, -1, axis=1)), 0.0).sum(axis=1)
    last = np.take_along_axis(ring, np.maximum(count - 1, 0)[:, None, None], axis=1)[:, 0]
    twice = edges + _cross(last, ring[:, 0])
    area: FloatArray = np.where(count >= 3, np.abs(twice) / 2, 0.0)
    return area


def overlap_bound(a: Corners, b: Corners, angle_a: FloatArray, angle_b: FloatArray) -> FloatArray:
    """(N,) an upper bound of each pair's overlap area: the overlap lies in each box and in the slab
    the other spans along that box's own axes (a separating-axis test that measures)."""
    bound = np.full(len(a), np.inf)
    for box, other, angle in ((a, b, angle_a), (b, a, angle_b)):
        radians = np.deg2rad(angle)[:, None]
        cos, sin = np.cos(radians), np.sin(radians)
        centre = box.mean(axis=1, keepdims=True)
        own, theirs = box - centre, other - centre
        spans = np.ones(len(a))
        for along_x, along_y in ((cos, sin), (-sin, cos)):  # the box's two axes
            mine = own[..., 0] * along_x + own[..., 1] * along_y  # (N, 4): the corners on that axis
            its = theirs[..., 0] * along_x + theirs[..., 1] * along_y
            low, high = (
                np.maximum(mine.min(axis=1), its.min(axis=1)),
                np.minimum(mine.max(axis=1), its.max(axis=1)),
            )
            spans *= np.maximum(high - low, 0.0)
        bound = np.minimum(bound, spans)
    return bound


def rotated_iou(a: Corners, b: Corners, area_a: FloatArray, area_b: FloatArray) -> FloatArray:
    """(N,) IoU of the pairs of rotated boxes given by their corners and areas; 0 where the union is 0."""
    return iou_of_intersection(
        np.minimum(intersection_area(a, b), np.minimum(area_a, area_b)), area_a, area_b
    )
