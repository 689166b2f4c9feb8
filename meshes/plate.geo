// Plate with a hole: the unit square minus a disc of radius 0.3 at its
// centre, quadrilaterals only (Recombine).  Physical curves name the
// boundary parts that -bc_dirichlet/-bc_neumann take.
// Regenerate: gmsh plate.geo -2 -format inp -o plate.inp
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
Physical Curve("bottom") = {1};
Physical Curve("right") = {2};
Physical Curve("top") = {3};
Physical Curve("left") = {4};
Physical Curve("hole") = {5, 6, 7, 8};
Physical Surface("plate") = {1};
