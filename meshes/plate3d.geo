// The plate with a hole (plate.geo) extruded to a slab of thickness 0.25
// in one layer of hexahedra: the hole is a cylinder of radius 0.3 along z
// through (0.5, 0.5).  Physical surfaces name the boundary parts:
// bottom, right, top, left (the square's sides), hole, front (z = 0),
// back (z = 0.25).
// Regenerate: gmsh plate3d.geo -3 -format inp -o plate3d.inp
SetFactory("Built-in");
h = 0.25;
Point(1) = {0, 0, 0, h}; Point(2) = {1, 0, 0, h}; Point(3) = {1, 1, 0, h}; Point(4) = {0, 1, 0, h};
Point(5) = {0.5, 0.5, 0, h};
Point(6) = {0.8, 0.5, 0, h}; Point(7) = {0.5, 0.8, 0, h}; Point(8) = {0.2, 0.5, 0, h}; Point(9) = {0.5, 0.2, 0, h};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Circle(5) = {6, 5, 7}; Circle(6) = {7, 5, 8}; Circle(7) = {8, 5, 9}; Circle(8) = {9, 5, 6};
Curve Loop(1) = {1, 2, 3, 4};
Curve Loop(2) = {5, 6, 7, 8};
Plane Surface(1) = {1, 2};
Recombine Surface{1};
out[] = Extrude {0, 0, 0.25} { Surface{1}; Layers{1}; Recombine; };
// out[0] the far face, out[1] the volume, out[2..9] the sides on curves 1..8
Physical Surface("bottom") = {out[2]};
Physical Surface("right") = {out[3]};
Physical Surface("top") = {out[4]};
Physical Surface("left") = {out[5]};
Physical Surface("hole") = {out[6], out[7], out[8], out[9]};
Physical Surface("front") = {1};
Physical Surface("back") = {out[0]};
Physical Volume("plate") = {out[1]};
