#!/usr/bin/env python3
"""Writes the coarse meshes of amrdlb as Abaqus .inp files.

Unstructured quads (hexes) are made the classic way: the domain is cut into
unit squares (cubes), each square into 2 triangles (each cube into the 6
Kuhn tetrahedra around its main diagonal, which match across shared faces),
and each triangle into 3 quads (each tetrahedron into 4 hexes) through its
edge midpoints, face centroids and centroid.  Vertex valences then vary
(3, 4, 6 in 2D), as in a real unstructured mesh.  Run: python3 make_meshes.py
"""
import itertools
import math
import os


def mid(*pts):
    return tuple(sum(c) / len(pts) for c in zip(*pts))


def det3(a, b, c):
    return (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
            + a[2] * (b[0] * c[1] - b[1] * c[0]))


def sub(a, b):
    return tuple(x - y for x, y in zip(a, b))


def triangle_quads(a, b, c):
    """3 counter-clockwise quads of the counter-clockwise triangle abc."""
    g = mid(a, b, c)
    ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
    return [(a, ab, g, ca), (b, bc, g, ab), (c, ca, g, bc)]


def square_quads(x, y, h):
    p = [(x, y, 0.0), (x + h, y, 0.0), (x + h, y + h, 0.0), (x, y + h, 0.0)]
    return triangle_quads(p[0], p[1], p[2]) + triangle_quads(p[0], p[2], p[3])


def tet_hexes(t):
    """4 hexes of tetrahedron t, in Abaqus C3D8 order with positive volume."""
    hexes = []
    for i in range(4):
        o = [t[j] for j in range(4) if j != i]
        v = t[i]
        if det3(sub(o[0], v), sub(o[1], v), sub(o[2], v)) < 0:
            o[0], o[1] = o[1], o[0]
        a, b, c = o
        bottom = (v, mid(v, a), mid(v, a, b), mid(v, b))
        top = (mid(v, c), mid(v, a, c), mid(v, a, b, c), mid(v, b, c))
        hexes.append(bottom + top)
    return hexes


def cube_hexes(x, y, z, h):
    lo = (x, y, z)
    out = []
    for perm in itertools.permutations(range(3)):
        p = [lo]
        q = list(lo)
        for axis in perm:
            q[axis] += h
            p.append(tuple(q))
        out += tet_hexes(p)
    return out


def write_inp(path, title, elements, etype, faces=None):
    """faces: {set name: [quadrilateral faces of the cells]}, written as
    CPS4 elements in element sets of those names (boundary parts)."""
    ids = {}
    nodes = []
    conn = []
    parts = [(name, quad) for name, quads in (faces or {}).items() for quad in quads]
    for e in elements + [quad for _, quad in parts]:
        row = []
        for p in e:
            key = tuple(round(c, 12) for c in p)
            if key not in ids:
                ids[key] = len(nodes) + 1
                nodes.append(key)
            row.append(ids[key])
        conn.append(row)
    with open(path, "w") as f:
        f.write("*Heading\n %s\n*Node\n" % title)
        for i, p in enumerate(nodes, 1):
            f.write("%d, %.12g, %.12g, %.12g\n" % ((i,) + p))
        f.write("*Element, type=%s, ELSET=Domain\n" % etype)
        for i, row in enumerate(conn[:len(elements)], 1):
            f.write("%d, %s\n" % (i, ", ".join(str(n) for n in row)))
        for i, (name, _) in enumerate(parts, len(elements) + 1):
            f.write("*Element, type=CPS4, ELSET=%s\n%d, %s\n" % (name, i, ", ".join(str(n) for n in conn[i - 1])))
    print("%s: %d nodes, %d elements" % (path, len(nodes), len(conn)))


def ball_hexes(r):
    """The cube (-1,1)^3 minus the ball of radius r at the origin: one hex
    per cube face, between the face and its corners' projections on the
    sphere (nodes 1-4 on the sphere, counter-clockwise seen from 5-8)."""
    hexes, inner, outer = [], [], []
    for a, s in itertools.product(range(3), (-1, 1)):
        b, c = (a + 1) % 3, (a + 2) % 3
        quad = []
        for u, v in ((-1, -1), (1, -1), (1, 1), (-1, 1))[::s]:
            p = [0.0] * 3
            p[a], p[b], p[c] = s, u, v
            quad.append(tuple(p))
        ring = [tuple(r * x / math.sqrt(3.0) for x in p) for p in quad]
        hexes.append(ring + quad)
        inner.append(ring)
        outer.append(quad)
    return hexes, {"ball": inner, "box": outer}


here = os.path.dirname(os.path.abspath(__file__))
lshape = [q for (x, y) in [(-1, 0), (0, 0), (-1, -1)] for q in square_quads(x, y, 1.0)]
write_inp(os.path.join(here, "lshape.inp"), "L-shaped domain (-1,1)^2 minus (0,1)x(-1,0)", lshape, "CPS4")
third = 1.0 / 3.0
hole = [q for i in range(3) for j in range(3) if (i, j) != (1, 1) for q in square_quads(i * third, j * third, third)]
write_inp(os.path.join(here, "hole.inp"), "unit square with a square hole (1/3,2/3)^2", hole, "CPS4")
fichera = [h for (x, y, z) in itertools.product((-1, 0), repeat=3) if (x, y, z) != (0, 0, 0) for h in cube_hexes(x, y, z, 1.0)]
write_inp(os.path.join(here, "fichera.inp"), "Fichera corner (-1,1)^3 minus (0,1)^3", fichera, "C3D8")
ball, ball_faces = ball_hexes(0.5)
write_inp(os.path.join(here, "ball.inp"), "the cube (-1,1)^3 minus the ball of radius 1/2", ball, "C3D8", ball_faces)
