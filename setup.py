"""Install urdf_state_publisher as an ament_python package (colcon) or with pip."""

from glob import glob

from setuptools import find_packages, setup

package_name = 'urdf_state_publisher'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*']),
    package_data={package_name: ['py.typed']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml') + glob('config/*.rviz')),
        ('share/' + package_name + '/urdf', glob('urdf/*.urdf') + glob('urdf/*.xacro')),
        # The page `urdf_state_publisher --help` points to for each parameter in full.
        ('share/' + package_name + '/doc', ['doc/parameters.md']),
    ],
    python_requires='>=3.10',
    # The non-ROS Python dependencies. In a ROS 2 install rosdep provides them (package.xml);
    # listing them here makes a plain `pip install .` next to rclpy work as well.
    install_requires=['setuptools', 'numpy', 'PyYAML', 'xacro'],
    zip_safe=True,
    maintainer='urdf_state_publisher developers',
    maintainer_email='dev@urdf-state-publisher.invalid',
    description='Publishes a robot description and its state on tf2, a drop-in for '
                'robot_state_publisher with mimic chains, joint limits and sensor frames.',
    license='Apache-2.0',
    # rosbags reads and writes bags for urdf_state_publisher_bag; not a ROS package (its rosdep
    # key is a pip key), so optional: the command says how to install it when it is missing.
    # zstd (the standard library's from Python 3.14) compresses an output file by file.
    # distributed (Dask) runs a batch of it on a cluster (--cluster); optional in the same way.
    extras_require={'test': ['pytest', 'hypothesis'],
                    'bag': ['rosbags>=0.11', 'backports.zstd; python_version < "3.14"'],
                    'cluster': ['distributed>=2023.1'],
                    # urdf_state_publisher_view: viser serves the page (its web client is in its
                    # wheel) and brings trimesh, which reads STL and OBJ; pycollada, DAE.
                    'view': ['viser>=1.0', 'pycollada']},
    entry_points={
        'console_scripts': [
            'urdf_state_publisher = urdf_state_publisher.ros.process:main',
            'urdf_state_publisher_container = urdf_state_publisher.ros.process:container_main',
            # cli.py: each puts its stop handlers in place before it imports its command.
            'urdf_state_publisher_inspect = urdf_state_publisher.tools.entry:inspect_main',
            'urdf_state_publisher_demo = urdf_state_publisher.tools.entry:demo_main',
            'urdf_state_publisher_bag = urdf_state_publisher.recorded.entry:main',
            'urdf_state_publisher_view = urdf_state_publisher.view.entry:main',
        ],
    },
)
